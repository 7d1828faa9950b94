//! `updateRemoteUserUID` on a host that does not run as root: as the reference CLI does, an
//! image derived from the session's with the remote user's uid:gid changed to the host
//! user's, so that the user writes the clone the host user owns. A small build through the
//! Engine API; the user name and ids reach the build only as build args (environment
//! variables of its one `RUN`), never in the Dockerfile's text.

use std::collections::BTreeMap;

use super::image_build::build_image;
use super::image_supply::{DerivedKind, ImageSupply};
use crate::devcontainer::BuildConfig;
use crate::engine::{image_present, Engine};
use crate::error::{Error, ErrorCode, Result};
use crate::session_settings::UidImage;

/// Leaves the image alone when the user is not in its passwd, is root, already has the ids, or
/// another user has the uid; keeps the group when another group has the gid.
const DOCKERFILE: &str = r#"ARG BASE_IMAGE
FROM $BASE_IMAGE
USER root
ARG REMOTE_USER
ARG NEW_UID
ARG NEW_GID
RUN set -e; \
  line=$(awk -F: '$1 == ENVIRON["REMOTE_USER"]' /etc/passwd | head -n 1); \
  if [ -z "$line" ]; then echo "remoteUser not in /etc/passwd"; exit 0; fi; \
  OLD_UID=$(echo "$line" | cut -d: -f3); OLD_GID=$(echo "$line" | cut -d: -f4); \
  home=$(echo "$line" | cut -d: -f6); export OLD_UID OLD_GID; \
  if [ "$OLD_UID" = 0 ]; then exit 0; fi; \
  if [ "$OLD_UID" = "$NEW_UID" ] && [ "$OLD_GID" = "$NEW_GID" ]; then exit 0; fi; \
  if [ "$OLD_UID" != "$NEW_UID" ] && awk -F: '$3 == ENVIRON["NEW_UID"] { found = 1 } END { exit !found }' /etc/passwd; then \
    echo "another user has uid $NEW_UID"; exit 0; fi; \
  if [ "$OLD_GID" != "$NEW_GID" ] && awk -F: '$3 == ENVIRON["NEW_GID"] { found = 1 } END { exit !found }' /etc/group; then \
    NEW_GID=$OLD_GID; fi; export NEW_GID; \
  awk -F: -v OFS=: '$1 == ENVIRON["REMOTE_USER"] { $3 = ENVIRON["NEW_UID"]; $4 = ENVIRON["NEW_GID"] } { print }' /etc/passwd > /tmp/passwd.new; \
  cat /tmp/passwd.new > /etc/passwd; rm -f /tmp/passwd.new; \
  if [ "$OLD_GID" != "$NEW_GID" ]; then \
    awk -F: -v OFS=: '$3 == ENVIRON["OLD_GID"] { $3 = ENVIRON["NEW_GID"] } { print }' /etc/group > /tmp/group.new; \
    cat /tmp/group.new > /etc/group; rm -f /tmp/group.new; fi; \
  if [ -d "$home" ]; then chown -R "$NEW_UID:$NEW_GID" "$home"; fi
ARG IMAGE_USER=root
USER $IMAGE_USER
"#;

/// Builds `image` from `base` (which must be present) unless it is there already.
pub async fn ensure_uid_image(
    image: &UidImage,
    engine: &Engine,
    base: &str,
    supply: &ImageSupply,
) -> Result<()> {
    if image_present(engine, &image.tag).await? {
        return Ok(());
    }
    let inspected = engine
        .call(
            &format!("image '{base}'"),
            engine.docker().inspect_image(base),
        )
        .await?;
    let image_user = inspected
        .config
        .and_then(|c| c.user)
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "root".into());
    let dir = std::env::temp_dir().join(format!("ci-uid-{}", uuid::Uuid::new_v4()));
    let written =
        std::fs::create_dir(&dir).and_then(|_| std::fs::write(dir.join("Dockerfile"), DOCKERFILE));
    let built = match written {
        Ok(()) => {
            let args = BTreeMap::from([
                ("BASE_IMAGE".to_string(), base.to_string()),
                ("REMOTE_USER".to_string(), image.user.clone()),
                ("NEW_UID".to_string(), image.uid.to_string()),
                ("NEW_GID".to_string(), image.gid.to_string()),
                ("IMAGE_USER".to_string(), image_user),
            ]);
            let build = BuildConfig {
                dockerfile: dir.join("Dockerfile"),
                context: dir.clone(),
                args,
                target: None,
            };
            let kind = (supply, DerivedKind::Uid);
            build_image(engine, &build, &image.tag, None, kind).await
        }
        Err(e) => Err(Error::new(
            ErrorCode::EngineError,
            format!("updateRemoteUserUID build context: {e}"),
        )),
    };
    let _ = std::fs::remove_dir_all(&dir);
    built
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineOptions;
    use crate::runtime::exec::ExecRequest;
    use crate::runtime::run_buffered;

    /// Against the machine's engine: the Debian test image's `agent` (uid 1000) becomes
    /// uid 4242, named with a shell-hostile user name that must reach nothing.
    #[tokio::test(flavor = "multi_thread")]
    async fn the_remote_user_gets_the_host_ids_in_a_derived_image() {
        let Ok(engine) = Engine::connect(&EngineOptions::default()).await else {
            return;
        };
        let base = "container-isolation-test:debian";
        let image = UidImage::new(base, "agent", 4242, 4343);
        let hostile = UidImage::new(base, "x'; touch /pwned; '", 4242, 4343);
        let supply = ImageSupply::default();
        ensure_uid_image(&image, &engine, base, &supply)
            .await
            .unwrap();
        ensure_uid_image(&hostile, &engine, base, &supply)
            .await
            .unwrap();
        let run = |tag: String| {
            let engine = engine.clone();
            async move {
                let name = format!("ci-uid-test-{}", uuid::Uuid::new_v4());
                let body = bollard::models::ContainerCreateBody {
                    image: Some(tag),
                    cmd: Some(vec!["sleep".into(), "30".into()]),
                    ..Default::default()
                };
                let options = bollard::query_parameters::CreateContainerOptionsBuilder::default()
                    .name(&name)
                    .build();
                engine
                    .docker()
                    .create_container(Some(options), body)
                    .await
                    .unwrap();
                engine.docker().start_container(&name, None).await.unwrap();
                let request = ExecRequest {
                    command: [
                        "sh",
                        "-c",
                        "id -u agent; id -g agent; stat -c %u /home/agent; ls /pwned 2>&1 || true",
                    ]
                    .map(str::to_string)
                    .to_vec(),
                    ..Default::default()
                };
                let out = run_buffered(&engine, &name, request).await.unwrap();
                let options = bollard::query_parameters::RemoveContainerOptionsBuilder::default()
                    .force(true)
                    .build();
                let _ = engine.docker().remove_container(&name, Some(options)).await;
                String::from_utf8_lossy(&out.stdout).into_owned()
            }
        };
        let changed = run(image.tag.clone()).await;
        let untouched = run(hostile.tag.clone()).await;
        for tag in [&image.tag, &hostile.tag] {
            let _ = engine
                .docker()
                .remove_image(
                    tag,
                    None::<bollard::query_parameters::RemoveImageOptions>,
                    None,
                )
                .await;
        }
        assert_eq!(
            changed.lines().take(3).collect::<Vec<_>>(),
            ["4242", "4343", "4242"]
        );
        assert_eq!(
            untouched.lines().take(3).collect::<Vec<_>>(),
            ["1000", "1000", "1000"]
        );
        assert!(untouched.contains("No such file"), "{untouched}");
    }
}
