//! Tests of tar streams (`tar_stream.rs`).

use super::*;

async fn entries(archive: Vec<u8>) -> Vec<(TarEntry, Vec<u8>)> {
    let chunks: Vec<std::result::Result<Bytes, Error>> = archive
        .chunks(97)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let mut reader = TarReader::new(futures_util::stream::iter(chunks), "test");
    let mut out = Vec::new();
    while let Some(entry) = reader.next_entry().await.unwrap() {
        let mut data = Vec::new();
        reader
            .read_content(entry.size, |b| data.extend_from_slice(&b))
            .await
            .unwrap();
        out.push((entry, data));
    }
    out
}

#[tokio::test]
async fn round_trips_files_long_names_and_directories() {
    let owner = EntryOwner {
        uid: 1000,
        gid: 1000,
    };
    let long = "d/".repeat(70) + "file";
    let mut archive: Vec<u8> = Vec::new();
    let dirs = directories(&["a".into(), "a/b".into()], 0o755, owner).unwrap();
    archive.extend_from_slice(&dirs[..dirs.len() - 2 * BLOCK]);
    for part in single_file(&long, Bytes::from_static(b"\0binary\xff"), 0o600, owner).unwrap() {
        archive.extend_from_slice(&part);
    }
    let got = entries(archive).await;
    assert_eq!(got.len(), 3);
    assert!(got[0].0.is_dir() && got[0].0.path == "a/");
    assert_eq!(got[2].0.path, long);
    assert!(got[2].0.is_regular());
    assert_eq!(got[2].1, b"\0binary\xff");
}

#[tokio::test]
async fn reads_pax_paths_and_sizes() {
    let mut builder = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_ustar();
    h.set_size(5);
    h.set_mode(0o644);
    h.set_cksum();
    let long = "x".repeat(150);
    builder.append_data(&mut h, &long, &b"hello"[..]).unwrap();
    let archive = builder.into_inner().unwrap();
    let got = entries(archive).await;
    assert_eq!(got[0].0.path, long);
    assert_eq!(got[0].1, b"hello");
}

#[test]
fn written_entries_carry_nanosecond_mtimes_and_long_paths_as_pax() {
    let owner = EntryOwner { uid: 7, gid: 8 };
    let long = "n".repeat(120);
    let mut archive = Vec::new();
    for part in single_file(&long, Bytes::from_static(b"abc"), 0o640, owner).unwrap() {
        archive.extend_from_slice(&part);
    }
    let mut reader = tar::Archive::new(&archive[..]);
    let mut entries = reader.entries().unwrap();
    let mut entry = entries.next().unwrap().unwrap();
    assert_eq!(entry.path().unwrap().to_str(), Some(long.as_str()));
    assert_eq!(entry.header().uid().unwrap(), 7);
    assert_eq!(entry.header().mode().unwrap(), 0o640);
    let mtime = entry
        .pax_extensions()
        .unwrap()
        .unwrap()
        .map(|e| e.unwrap())
        .find(|e| e.key() == Ok("mtime"))
        .map(|e| e.value().unwrap().to_string())
        .unwrap();
    assert_eq!(mtime.split_once('.').unwrap().1.len(), 9, "{mtime}");
    let mut data = String::new();
    std::io::Read::read_to_string(&mut entry, &mut data).unwrap();
    assert_eq!(data, "abc");
    assert!(entries.next().is_none());
}

#[test]
fn parses_octal_and_base256_sizes() {
    assert_eq!(parse_size(b"00000000012\0"), Some(10));
    let mut big = [0u8; 12];
    big[0] = 0x80;
    big[11] = 1;
    big[10] = 1;
    assert_eq!(parse_size(&big), Some(257));
}
