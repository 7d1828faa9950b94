use std::sync::atomic::Ordering;

use tokio::io::AsyncReadExt;

use super::*;

/// Each read the guard answers over `client` (with room for everything at once), until
/// its end or an error.
async fn reads(client: &[u8]) -> (Vec<Vec<u8>>, Option<String>, RefusedHead) {
    let refused = RefusedHead::default();
    let mut guard = RequestGuard::new(client, refused.clone(), Switched::default());
    let mut pieces = Vec::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match guard.read(&mut buf).await {
            Ok(0) => return (pieces, None, refused),
            Ok(n) => pieces.push(buf[..n].to_vec()),
            Err(e) => return (pieces, Some(e.to_string()), refused),
        }
    }
}

fn refusal(refused: &RefusedHead) -> Option<String> {
    refused.lock().unwrap().clone()
}

const GET: &[u8] = b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";

#[tokio::test]
async fn pipelined_requests_are_handed_on_one_message_at_a_time() {
    let post = b"POST http://a.test/p HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
    let chunked = b"POST http://b.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    let chunks = b"3\r\nabc\r\n0\r\n\r\n";
    let mut client = GET.to_vec();
    client.extend_from_slice(post);
    client.extend_from_slice(b"hello");
    client.extend_from_slice(chunked);
    client.extend_from_slice(chunks);
    client.extend_from_slice(GET);
    let (pieces, error, refused) = reads(&client).await;
    assert_eq!(error, None);
    assert_eq!(refusal(&refused), None);
    let expected: Vec<&[u8]> = vec![
        GET, post, b"hello", chunked, b"3\r\n", b"abc", b"\r\n", b"0\r\n", b"\r\n", GET,
    ];
    assert_eq!(pieces, expected);
}

#[tokio::test]
async fn a_malformed_head_after_a_good_one_becomes_the_stand_in_and_the_end() {
    for (bad, why) in [
        (
            &b"GET http://b.test/ HTTP/1.1\nHost: b.test\r\n\r\n"[..],
            "bare LF",
        ),
        (
            b"GET http://b.test/ HTTP/1.1\r\nHost: b.test\rX: 1\r\n\r\n",
            "bare CR",
        ),
        (b"GET http://b.test/\x00 HTTP/1.1\r\n\r\n", "0x00"),
        (b"GET http://b.test/ HTTP/1.1\r\nX: a\x01b\r\n\r\n", "0x01"),
        (
            b"GET http://b.test/ HTTP/1.1\r\nHost: c.test\r\n\r\n",
            "Host header",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: b.test\r\n\r\n",
            "absolute http://",
        ),
    ] {
        let mut client = GET.to_vec();
        client.extend_from_slice(bad);
        client.extend_from_slice(GET);
        let (pieces, error, refused) = reads(&client).await;
        assert_eq!(error, None);
        assert_eq!(pieces, vec![GET, STAND_IN], "{why}");
        let reason = refusal(&refused).unwrap();
        assert!(reason.contains(why), "{reason} lacks {why}");
    }
}

#[tokio::test]
async fn a_tunnel_passes_as_it_is_and_a_bad_chunk_is_an_error() {
    let connect = b"CONNECT a.test:443 HTTP/1.1\r\n\r\n";
    let mut client = connect.to_vec();
    client.extend_from_slice(b"\x16\x03\x01 anything\nat all\x00");
    let (pieces, error, _) = reads(&client).await;
    assert_eq!(error, None);
    assert_eq!(pieces.concat(), client);
    assert_eq!(pieces[0], connect);

    let mut client = b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    client.extend_from_slice(b"3\nabc\r\n0\r\n\r\n");
    let (pieces, error, _) = reads(&client).await;
    assert_eq!(pieces.len(), 1);
    assert!(error.unwrap().contains("bare LF"));
}

#[tokio::test]
async fn a_head_arriving_a_byte_at_a_time_and_one_too_large() {
    let (mut ours, mut theirs) = tokio::io::duplex(64);
    let refused = RefusedHead::default();
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        for b in GET {
            theirs.write_all(&[*b]).await.unwrap();
        }
        theirs
    });
    let mut guard = RequestGuard::new(&mut ours, refused.clone(), Switched::default());
    let mut buf = vec![0u8; 4096];
    let n = guard.read(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], GET);
    drop(writer.await.unwrap());

    let mut huge = b"GET http://a.test/ HTTP/1.1\r\n".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 70 * 1024));
    let (pieces, _, refused) = reads(&huge).await;
    assert_eq!(pieces, vec![STAND_IN]);
    assert!(refusal(&refused).unwrap().contains("over 64 KiB"));
}

const UPGRADE: &[u8] =
    b"GET http://a.test/ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
const FRAMES: &[u8] = b"\x81\x84\x00\x01\x02\x03ping\r\n\x00";

/// The guard over `client`, the proxy answering `101` to the first head read when `answer`
/// says so: what the reads after that first head get, and the refusal.
async fn after_first_head(client: &[u8], answer: bool) -> (Vec<u8>, Option<String>) {
    let refused = RefusedHead::default();
    let switched = Switched::default();
    let mut guard = RequestGuard::new(client, refused.clone(), switched.clone());
    let mut buf = vec![0u8; 256 * 1024];
    let n = guard.read(&mut buf).await.unwrap();
    assert!(n > 0);
    switched.store(answer, Ordering::Release);
    let mut rest = Vec::new();
    guard.read_to_end(&mut rest).await.unwrap();
    (rest, refusal(&refused))
}

#[tokio::test]
async fn after_a_101_to_an_upgrade_the_new_protocols_bytes_pass_as_they_are() {
    let mut client = UPGRADE.to_vec();
    client.extend_from_slice(FRAMES);
    assert_eq!(
        after_first_head(&client, true).await,
        (FRAMES.to_vec(), None)
    );
}

#[tokio::test]
async fn without_a_101_what_follows_an_upgrade_request_is_checked_as_a_head() {
    let mut client = UPGRADE.to_vec();
    client.extend_from_slice(GET);
    assert_eq!(after_first_head(&client, false).await, (GET.to_vec(), None));
    let mut client = UPGRADE.to_vec();
    client.extend_from_slice(FRAMES);
    let (rest, refused) = after_first_head(&client, false).await;
    assert_eq!(rest, STAND_IN);
    assert!(refused.is_some());
}

#[tokio::test]
async fn a_switch_is_honoured_only_right_after_an_upgrade_request_without_a_body() {
    let with_body = b"POST http://a.test/ws HTTP/1.1\r\nUpgrade: h2c\r\nContent-Length: 3\r\n\r\n";
    let old = b"GET http://a.test/ws HTTP/1.0\r\nUpgrade: websocket\r\n\r\n";
    for first in [GET, &with_body[..], &old[..]] {
        let mut client = first.to_vec();
        if first == with_body {
            client.extend_from_slice(b"abc");
        }
        client.extend_from_slice(FRAMES);
        let (rest, refused) = after_first_head(&client, true).await;
        assert!(
            rest.ends_with(STAND_IN),
            "{}",
            String::from_utf8_lossy(first)
        );
        assert!(refused.is_some());
    }
}
