use super::*;

fn head(text: &[u8]) -> Result<RequestHead, String> {
    let mut checked = 0;
    let end = head_end(text, &mut checked)?.ok_or("incomplete")?;
    assert_eq!(end, text.len(), "one head");
    parse_head(text)
}

fn forward(host: &str, port: u16, body: BodyLength) -> RequestHead {
    RequestHead {
        connect: false,
        upgrade: false,
        host: host.into(),
        port,
        body,
    }
}

#[test]
fn connect_names_host_and_port() {
    let r = head(b"CONNECT Example.com.:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n").unwrap();
    assert_eq!(
        r,
        RequestHead {
            connect: true,
            upgrade: false,
            host: "example.com".into(),
            port: 443,
            body: BodyLength::Empty
        }
    );
    let v6 = head(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
    assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));
    assert!(head(b"CONNECT example.com HTTP/1.1\r\n\r\n").is_err());
    assert!(head(b"CONNECT a.test:443 HTTP/1.1\r\nContent-Length: 3\r\n\r\n").is_err());
}

#[test]
fn a_plain_request_names_its_destination_and_framing() {
    assert_eq!(
        head(b"GET http://Internet.test/a?b=1 HTTP/1.1\r\nHost: internet.test\r\nProxy-Connection: keep-alive\r\nContent-Length: 4\r\n\r\n"),
        Ok(forward("internet.test", 80, BodyLength::Length(4)))
    );
    assert_eq!(
        head(b"GET http://internet.test:8080 HTTP/1.0\r\n\r\n"),
        Ok(forward("internet.test", 8080, BodyLength::Empty))
    );
    assert_eq!(
        head(b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"),
        Ok(forward("a.test", 80, BodyLength::Chunked))
    );
    assert_eq!(
        head(b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n"),
        Ok(forward("a.test", 80, BodyLength::Empty))
    );
    assert_eq!(
        head(b"GET http://[2001:db8::1]:81/ HTTP/1.1\r\nHost: [2001:DB8::1]:81\r\nX: a\tb\r\n\r\n"),
        Ok(forward("2001:db8::1", 81, BodyLength::Empty))
    );
}

#[test]
fn what_a_proxy_must_not_pass_is_refused() {
    for bad_request in [
        &b"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n"[..],
        b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
        b"GET http://a.test/ HTTP/1.1\r\nHost: a.test:81\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        b"GET https://a.test/ HTTP/1.1\r\n\r\n",
        b"GET http://user@a.test/ HTTP/1.1\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nContent-Length: +3\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 3, 3\r\n\r\n",
        b"GET http://a.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
        b"GET http://a.test/ HTTP/1.1\r\nX : a\r\n\r\n",
        b"GET http://a.test/ HTTP/2\r\n\r\n",
        b"GET http://a b/ HTTP/1.1\r\n\r\n",
        b"GET  http://a.test/ HTTP/1.1\r\n\r\n",
        b"GET http://a.test/\xc3\xa9 HTTP/1.1\r\n\r\n",
        b"\r\nGET http://a.test/ HTTP/1.1\r\n\r\n",
        b"connect a.test:443 HTTP/1.1\r\n\r\n",
    ] {
        assert!(
            head(bad_request).is_err(),
            "{}",
            String::from_utf8_lossy(bad_request)
        );
    }
}

#[test]
fn the_end_of_a_head_is_found_only_through_crlf() {
    let mut checked = 0;
    let text = b"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\nNEXT";
    assert_eq!(head_end(&text[..20], &mut checked), Ok(None));
    assert_eq!(head_end(&text[..44], &mut checked), Ok(None));
    assert_eq!(head_end(text, &mut checked), Ok(Some(text.len() - 4)));
    for (bad, why) in [
        (&b"GET http://a.test/ HTTP/1.1\n\n"[..], "bare LF"),
        (b"GET http://a.test/ HTTP/1.1\r\nX: 1\n\r\n", "bare LF"),
        (b"GET http://a.test/ HTTP/1.1\r\r\n", "bare CR"),
        (b"GET http://a.test/\x00 HTTP/1.1\r\n\r\n", "0x00"),
        (b"GET http://a.test/ HTTP/1.1\r\nX: \x1b[0m\r\n\r\n", "0x1b"),
        (b"GET http://a.test/ HTTP/1.1\r\nX: \x7f\r\n\r\n", "0x7f"),
    ] {
        let mut checked = 0;
        let err = head_end(bad, &mut checked).unwrap_err();
        assert!(err.contains(why), "{err}");
    }
    let mut huge = b"GET http://a.test/ HTTP/1.1\r\n".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 70 * 1024));
    assert!(head_end(&huge, &mut 0).unwrap_err().contains("over 64 KiB"));
}

#[test]
fn an_upgrade_is_an_http_1_1_request_with_an_upgrade_header_as_hyper_reads_one() {
    let ws = b"GET http://a.test/ws HTTP/1.1\r\nConnection: Upgrade\r\nuPgRaDe: websocket\r\n\r\n";
    assert!(head(ws).unwrap().upgrade);
    let old = b"GET http://a.test/ws HTTP/1.0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    assert!(!head(old).unwrap().upgrade);
    let named_only = b"GET http://a.test/ws HTTP/1.1\r\nConnection: Upgrade\r\n\r\n";
    assert!(!head(named_only).unwrap().upgrade);
    let tunnel = b"CONNECT a.test:443 HTTP/1.1\r\nUpgrade: websocket\r\n\r\n";
    assert!(!head(tunnel).unwrap().upgrade);
}
