//! Input files, read as `sed` reads them, and in-place edits.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Read};
use std::path::{Path, PathBuf};

use crate::stop::Stop;

/// One input: stdin, or a file opened when its turn comes.
#[derive(Debug)]
pub enum Input {
    /// Standard input (no FILE, or `-`).
    Stdin,
    /// A file checked to be readable, opened when its turn comes, so that
    /// `srep ... *.log` holds one file open at a time.
    Path(PathBuf),
    /// A file already open, and how messages name it.
    File(File, String),
}

impl Input {
    /// How messages name it.
    pub fn name(&self) -> String {
        match self {
            Input::Stdin => "stdin".to_owned(),
            Input::Path(p) => p.display().to_string(),
            Input::File(_, name) => name.clone(),
        }
    }

    /// A reader of its bytes.
    pub fn open(self) -> io::Result<Box<dyn Read>> {
        Ok(match self {
            Input::Stdin => Box::new(io::stdin().lock()),
            Input::Path(p) => Box::new(File::open(p)?),
            Input::File(f, _) => Box::new(f),
        })
    }
}

/// The inputs for `paths`, in order: stdin when there are none. Each file
/// is opened and closed now, so that a missing or unreadable one is
/// refused before anything is written.
///
/// # Errors
///
/// A message naming the first file that cannot be read.
pub fn open_all(paths: &[OsString]) -> Result<Vec<Input>, String> {
    if paths.is_empty() {
        return Ok(vec![Input::Stdin]);
    }
    paths
        .iter()
        .map(|p| {
            if p == "-" {
                return Ok(Input::Stdin);
            }
            let path = PathBuf::from(p);
            readable(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            Ok(Input::Path(path))
        })
        .collect()
}

// Opens `path` for reading and checks that it is not a directory (which
// opens, and fails only on the first read).
fn readable(path: &Path) -> io::Result<File> {
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    Ok(file)
}

/// The files `-i` edits, as given (for messages) and resolved (a symbolic
/// link to its target, which is the file edited).
///
/// # Errors
///
/// A message naming the first argument that is stdin, missing, unreadable
/// or not a regular file: nothing is edited then.
pub fn in_place_targets(paths: &[OsString]) -> Result<Vec<(String, PathBuf)>, String> {
    paths
        .iter()
        .map(|p| {
            let shown = Path::new(p).display().to_string();
            if p == "-" {
                return Err("-i: cannot edit stdin (-) in place".to_owned());
            }
            let target = fs::canonicalize(p).map_err(|e| format!("cannot edit {shown}: {e}"))?;
            let file = File::open(&target).map_err(|e| format!("cannot edit {shown}: {e}"))?;
            let meta = file
                .metadata()
                .map_err(|e| format!("cannot edit {shown}: {e}"))?;
            if !meta.is_file() {
                return Err(format!("cannot edit {shown}: not a regular file"));
            }
            Ok((shown, target))
        })
        .collect()
}

/// Runs `edit` from `target` into a new file in its directory, then puts
/// that file in `target`'s place with a rename, which readers see whole or
/// not at all. The new file gets `target`'s permissions (and its owner and
/// group, where the user may give them). When `edit` or
/// any step fails, the new file is removed and `target` is left as it was.
///
/// # Errors
///
/// `edit`'s error, or the I/O error of a step.
pub fn replace_atomically<F>(target: &Path, edit: F) -> Result<(), Stop>
where
    F: FnOnce(Input, &mut BufWriter<File>) -> Result<(), Stop>,
{
    let read = |e| Stop::Read(target.display().to_string(), e);
    let input = File::open(target).map_err(read)?;
    let meta = input.metadata().map_err(read)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = target.file_name().unwrap_or_default().to_string_lossy();
    let (temp_path, temp) = create_temp(dir, &name).map_err(Stop::Write)?;
    let temp_path = RemoveOnDrop(Some(temp_path));
    let mut output = BufWriter::new(temp);
    edit(
        Input::File(input, target.display().to_string()),
        &mut output,
    )?;
    let file = output
        .into_inner()
        .map_err(|e| Stop::Write(e.into_error()))?;
    keep_owner(&file, &meta);
    file.set_permissions(meta.permissions())
        .map_err(Stop::Write)?;
    file.sync_all().map_err(Stop::Write)?;
    drop(file);
    let path = temp_path.0.as_deref().unwrap_or(target);
    fs::rename(path, target).map_err(Stop::Write)?;
    temp_path.keep();
    // The rename is durable once the directory is synced. It has happened
    // either way, so a directory that cannot be synced is not an error.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

// Gives the new file the old one's owner and group where the user may (as
// root, or the group when the user is in it); otherwise it keeps the user's,
// as sed -i does.
#[cfg(unix)]
fn keep_owner(file: &File, old: &fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    if std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).is_err() {
        let _ = std::os::unix::fs::fchown(file, None, Some(old.gid()));
    }
}

#[cfg(not(unix))]
fn keep_owner(_: &File, _: &fs::Metadata) {}

// A new file `.NAME.srep-PID-N` in `dir`, created exclusively so that no
// other file is overwritten.
fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut last = None;
    for n in 0..100 {
        let path = dir.join(format!(".{name}.srep-{pid}-{n}"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no free temporary name")))
}

// Removes the temporary file unless it was renamed into place.
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn keep(mut self) {
        self.0 = None;
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = fs::remove_file(path);
        }
    }
}
