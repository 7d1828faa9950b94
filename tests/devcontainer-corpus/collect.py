#!/usr/bin/env python3
# Rebuilds this corpus from bare git mirrors of devcontainers/{cli,images,templates}:
#   MIRRORS=<dir holding devcontainers+cli/repo, devcontainers+images/repo, devcontainers+templates/repo> python3 collect.py
# Corpus of real devcontainer.json files (data only: the config, its compose YAML; no
# Dockerfiles or scripts, which are code), from fetched snapshots of devcontainers/{cli,images,templates}.
import json, os, subprocess, posixpath, re, shutil
import pathlib, os
OUT = str(pathlib.Path(__file__).resolve().parent)
MIRRORS = os.environ.get('MIRRORS') or exit('collect.py: set MIRRORS to the folder of the git mirrors')
SOURCES = [
  ('devcontainers-cli', 'devcontainers/cli', MIRRORS + '/devcontainers+cli/repo', lambda p: p.startswith('src/test/') or p in ('.devcontainer/devcontainer.json', 'example-usage/workspace/.devcontainer/devcontainer.json')),
  ('devcontainers-images', 'devcontainers/images', MIRRORS + '/devcontainers+images/repo', lambda p: True),
  ('devcontainers-templates', 'devcontainers/templates', MIRRORS + '/devcontainers+templates/repo', lambda p: True),
]
CONFIG = re.compile(r'(^|/)\.?devcontainer\.json$')
# A registry's host at the head of an image or feature reference (not in a URL) is replaced by
# `registry.example`: the project names no registry host in its files.
REGISTRY_HOST = re.compile(rb'(?<!://)(?<![\w.-])[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}(?::[0-9]+)?/')
def redact(data): return REGISTRY_HOST.sub(b'registry.example/', data)
DATA_SIBLING = re.compile(r'^(docker-compose[^/]*\.ya?ml|compose[^/]*\.ya?ml)$')
def git(repo, *a, binary=False):
    r = subprocess.run(['git', '-C', repo, *a], capture_output=True)
    if r.returncode: raise RuntimeError(r.stderr.decode())
    return r.stdout if binary else r.stdout.decode()
for _name, *_ in SOURCES: shutil.rmtree(os.path.join(OUT, _name), ignore_errors=True)
for name, slug, repo, keep in SOURCES:
    commit = git(repo, 'rev-parse', 'HEAD').strip()
    blobs = set()
    for line in git(repo, 'ls-tree', '-r', 'HEAD').splitlines():
        meta, path = line.split('\t', 1)
        if meta.split()[1] == 'blob': blobs.add(path)
    configs = sorted(p for p in blobs if CONFIG.search(p) and keep(p))
    manifest = []
    for n, p in enumerate(configs, 1):
        dest = os.path.join(OUT, name, str(n)); dcdir = os.path.join(dest, '.devcontainer')
        os.makedirs(dcdir, exist_ok=True)
        d = posixpath.dirname(p); base = posixpath.basename(p)
        layout = ('.devcontainer.json' if base == '.devcontainer.json' else '.devcontainer/devcontainer.json' if posixpath.basename(d) == '.devcontainer'
                  else '.devcontainer/<folder>/devcontainer.json' if posixpath.basename(posixpath.dirname(d)) == '.devcontainer' else 'other')
        content = redact(git(repo, 'show', f'HEAD:{p}', binary=True))
        open(os.path.join(dcdir, 'devcontainer.json'), 'wb').write(content)
        kept = []
        for q in sorted(blobs):
            if posixpath.dirname(q) == d and DATA_SIBLING.match(posixpath.basename(q)):
                open(os.path.join(dcdir, posixpath.basename(q)), 'wb').write(redact(git(repo, 'show', f'HEAD:{q}', binary=True))); kept.append(posixpath.basename(q))
        text = content.decode('utf-8', 'replace')
        dockerfiles = []
        for m in re.finditer(r'"(?:dockerfile|dockerFile)"\s*:\s*"((?:[^"\\]|\\.)*)"', text):
            item = m.group(1)
            line = text[:m.start()].rsplit('\n', 1)[-1]
            if line.strip().startswith('//') or item.startswith('/') or '${' in item: continue
            src = posixpath.normpath(posixpath.join(d, item))
            dockerfiles.append({'as': item, 'inSource': src in blobs, 'kept': False})
        info = {'n': n, 'repo': slug, 'commit': commit, 'path': p, 'originalLayout': layout, 'dataKept': kept,
                'dockerfiles': dockerfiles,
                'note': 'Only data is kept (devcontainer.json, compose YAML). Dockerfiles and scripts are not; the conformance script puts a placeholder where a Dockerfile existed in the source. Registry host names in image and feature references are replaced by registry.example (a reserved name, RFC 2606).'}
        json.dump(info, open(os.path.join(dest, 'SOURCE.json'), 'w'), indent=1)
        manifest.append({k: info[k] for k in ('n', 'path', 'originalLayout')})
    json.dump({'repo': slug, 'commit': commit, 'files': manifest}, open(os.path.join(OUT, name, 'MANIFEST.json'), 'w'), indent=1)
    print(name, len(configs))
