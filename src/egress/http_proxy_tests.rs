use super::*;

async fn read(bytes: &[u8]) -> Result<ProxyRequest, ProxyError> {
    let mut reader = bytes;
    read_request(&mut reader).await
}

#[tokio::test]
async fn connect_names_host_and_port() {
    let r = read(b"CONNECT Example.com.:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nHELLO")
        .await
        .unwrap();
    assert_eq!(
        r,
        ProxyRequest::Connect {
            host: "example.com".into(),
            port: 443,
            rest: b"HELLO".to_vec()
        }
    );
    let v6 = read(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").await.unwrap();
    assert!(matches!(v6, ProxyRequest::Connect { host, port: 8443, .. } if host == "::1"));
    assert!(matches!(
        read(b"CONNECT example.com HTTP/1.1\r\n\r\n").await,
        Err(ProxyError::BadRequest(_))
    ));
}

#[tokio::test]
async fn a_plain_request_is_rewritten_for_the_origin() {
    let r = read(b"GET http://internet.test/a?b=1 HTTP/1.1\r\nHost: internet.test\r\nProxy-Connection: keep-alive\r\nConnection: x-hop\r\nX-Hop: 1\r\nAccept: */*\r\nContent-Length: 4\r\n\r\nbody").await.unwrap();
    let ProxyRequest::Forward {
        host,
        port,
        head,
        rest,
    } = r
    else {
        panic!()
    };
    assert_eq!((host.as_str(), port), ("internet.test", 80));
    assert_eq!(
        String::from_utf8(head).unwrap(),
        "GET /a?b=1 HTTP/1.1\r\nHost: internet.test\r\nAccept: */*\r\nContent-Length: 4\r\nConnection: close\r\n\r\n"
    );
    assert_eq!(rest, b"body");
    let added = read(b"GET http://internet.test:8080 HTTP/1.0\r\n\r\n")
        .await
        .unwrap();
    let ProxyRequest::Forward {
        head, port: 8080, ..
    } = added
    else {
        panic!()
    };
    assert!(String::from_utf8(head)
        .unwrap()
        .starts_with("GET / HTTP/1.0\r\nHost: internet.test:8080\r\n"));
}

#[tokio::test]
async fn what_a_proxy_must_not_pass_is_refused() {
    for bad_request in [
        &b"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        b"GET https://a.test/ HTTP/1.1\r\n\r\n",
        b"GET http://user@a.test/ HTTP/1.1\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
        b"POST http://a.test/ HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n",
        b"GET http://a.test/ HTTP/1.1\r\nX: a\r\n folded\r\n\r\n",
        b"GET http://a.test/ HTTP/2\r\n\r\n",
        b"GET http://a b/ HTTP/1.1\r\n\r\n",
    ] {
        assert!(
            matches!(read(bad_request).await, Err(ProxyError::BadRequest(_))),
            "{}",
            String::from_utf8_lossy(bad_request)
        );
    }
    let mut huge = b"GET http://a.test/ HTTP/1.1\r\n".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 70 * 1024));
    assert!(matches!(read(&huge).await, Err(ProxyError::TooLarge)));
    assert!(matches!(
        read(b"GET http://a.test/ HTTP/1.1\r\n").await,
        Err(ProxyError::Closed)
    ));
}

#[test]
fn a_refusal_is_one_line_in_body_and_header() {
    let text = String::from_utf8(refusal(403, "Forbidden", "no\rway")).unwrap();
    assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"));
    assert!(text.contains("X-Container-Isolation-Refusal: no way\r\n"));
    assert!(text.contains("Content-Length: 7\r\n"));
    assert_eq!(
        connect_established(),
        b"HTTP/1.1 200 Connection established\r\n\r\n"
    );
}
