//! A host-owned bare repository where a session's work is assembled before it leaves:
//! the clone's objects the project lacks are copied in and checked, the snapshot of the
//! work tree is made there, and pushes start from it (its config is its own, empty). It
//! reads the project's objects through `objects/info/alternates`, so only what the session
//! added is copied. Made fresh for one call under `${baseDir}/delivery/` and removed
//! after; one left by a crash is removed by a later call once an hour old.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::Repository;

use crate::error::{Error, ErrorCode, Result};

/// Left-over staging directories older than this belong to a crashed call.
const ABANDONED_AGE: Duration = Duration::from_secs(3600);

fn io(path: &Path, err: std::io::Error) -> Error {
    Error::new(ErrorCode::Git, format!("{}: {err}", path.display()))
}

pub struct Staging {
    dir: PathBuf,
    repo: Repository,
}

fn remove_abandoned(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.filter_map(|e| e.ok()) {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ABANDONED_AGE);
        if old && entry.file_name().as_encoded_bytes().starts_with(b".stage-") {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Staging {
    /// A new staging repository under `root` that sees `project`'s objects.
    pub fn new(root: &Path, project: &Repository) -> Result<Staging> {
        std::fs::create_dir_all(root).map_err(|e| io(root, e))?;
        remove_abandoned(root);
        let dir = root.join(format!(".stage-{}", uuid::Uuid::new_v4().simple()));
        let repo = Repository::init_bare(&dir).map_err(|e| Error::git("staging repository", e))?;
        let project_objects = project.path().join("objects");
        let alternates = dir.join("objects").join("info").join("alternates");
        let mut file = std::fs::File::create(&alternates).map_err(|e| io(&alternates, e))?;
        writeln!(file, "{}", project_objects.display()).map_err(|e| io(&alternates, e))?;
        drop(file);
        // Reopened, so that libgit2 reads the alternates just written.
        drop(repo);
        let repo = Repository::open_bare(&dir).map_err(|e| Error::git("staging repository", e))?;
        Ok(Staging { dir, repo })
    }

    pub fn repo(&self) -> &Repository {
        &self.repo
    }

    /// Moves every object written here (not those read through the alternates) into
    /// `project`'s object directory, each complete before its name appears: the packs
    /// (the `.idx`, by which git finds a pack, last), then the loose objects; returns how
    /// many loose objects the project did not have.
    pub fn move_objects_into(&self, project: &Repository) -> Result<usize> {
        let from = self.dir.join("objects");
        let to = project.path().join("objects");
        move_packs(&from.join("pack"), &to.join("pack"))?;
        let mut moved = 0;
        for fan in std::fs::read_dir(&from).map_err(|e| io(&from, e))? {
            let fan = fan.map_err(|e| io(&from, e))?;
            let name = fan.file_name();
            let is_fan =
                name.len() == 2 && name.as_encoded_bytes().iter().all(u8::is_ascii_hexdigit);
            if !is_fan {
                continue;
            }
            for object in std::fs::read_dir(fan.path()).map_err(|e| io(&fan.path(), e))? {
                let object = object.map_err(|e| io(&fan.path(), e))?;
                if move_object(&object.path(), &to.join(&name), &object.file_name())? {
                    moved += 1;
                }
            }
        }
        Ok(moved)
    }
}

/// The packs of `from` into `to`, each one's `.idx` after its other files.
fn move_packs(from: &Path, to: &Path) -> Result<()> {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(from) {
        Ok(entries) => entries.filter_map(|e| e.ok()).map(|e| e.path()).collect(),
        Err(_) => return Ok(()),
    };
    files.retain(|f| {
        f.file_name()
            .is_some_and(|n| n.as_encoded_bytes().starts_with(b"pack-"))
    });
    files.sort_by_key(|f| f.extension().is_some_and(|e| e == "idx"));
    for file in files {
        let name = file.file_name().unwrap_or_default().to_owned();
        move_object(&file, to, &name)?;
    }
    Ok(())
}

/// One loose object (or pack) file into `fan_dir`, unless it is there already.
fn move_object(source: &Path, fan_dir: &Path, name: &std::ffi::OsStr) -> Result<bool> {
    let target = fan_dir.join(name);
    if target.exists() {
        return Ok(false);
    }
    std::fs::create_dir_all(fan_dir).map_err(|e| io(fan_dir, e))?;
    if std::fs::rename(source, &target).is_ok() {
        return Ok(true);
    }
    // Another file system: copied aside, then renamed into place.
    let mut temp = fan_dir.join(name).into_os_string();
    temp.push(format!(".tmp-{}", uuid::Uuid::new_v4().simple()));
    let temp = PathBuf::from(temp);
    if let Err(e) = std::fs::copy(source, &temp).and_then(|_| std::fs::rename(&temp, &target)) {
        let _ = std::fs::remove_file(&temp);
        return Err(io(&target, e));
    }
    Ok(true)
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
