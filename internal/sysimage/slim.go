package sysimage

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// slimConfig is written into a debootstrapped root before it is imported,
// so it behaves like Debian's official slim container image: packages
// installed later skip documentation and translations, apt keeps no package
// cache, and no service starts during an image build.
var slimConfig = map[string]string{
	"etc/dpkg/dpkg.cfg.d/docker": `# Keep images lean: no documentation (copyright files excepted), manuals
# or translations.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
`,
	"etc/apt/apt.conf.d/docker-clean": `DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
`,
	"etc/apt/apt.conf.d/docker-no-languages":        "Acquire::Languages \"none\";\n",
	"etc/apt/apt.conf.d/docker-gzip-indexes":        "Acquire::GzipIndexes \"true\";\n",
	"etc/apt/apt.conf.d/docker-autoremove-suggests": "Apt::AutoRemove::SuggestsImportant \"false\";\n",
	// Services started by a package's postinst would run inside a build
	// step; the images start theirs under the supervisor instead.
	"usr/sbin/policy-rc.d": "#!/bin/sh\nexit 101\n",
}

// slimRemove lists what the slim configuration excludes, plus caches and
// the host's own files debootstrap copied (resolv.conf, hostname): the
// engine provides those at run time.
var slimRemove = []string{
	"usr/share/doc", "usr/share/man", "usr/share/groff", "usr/share/info",
	"usr/share/lintian", "usr/share/linda", "usr/share/locale",
	"var/lib/apt/lists", "var/cache/apt", "var/cache/debconf/*-old",
	"var/log/*.log", "var/log/apt/*",
	"etc/resolv.conf", "etc/hostname",
}

// slim makes the root at dir a slim image root (see slimConfig).
func slim(dir string) error {
	for _, pattern := range slimRemove {
		matches, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			return err
		}
		for _, m := range matches {
			if err := removeExcept(dir, m); err != nil {
				return err
			}
		}
	}
	for _, d := range []string{"var/lib/apt/lists/partial", "var/cache/apt/archives/partial"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for name, content := range slimConfig {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(content, "#!") {
			mode = 0o755
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	}
	return nil
}

// removeExcept removes path, keeping what the dpkg configuration keeps:
// copyright files under usr/share/doc and usr/share/locale/locale.alias.
func removeExcept(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return err
	}
	rel = filepath.ToSlash(rel)
	if rel != "usr/share/doc" && rel != "usr/share/locale" {
		return os.RemoveAll(path)
	}
	keep := func(p string) bool {
		r, _ := filepath.Rel(root, p)
		r = filepath.ToSlash(r)
		return r == "usr/share/locale/locale.alias" ||
			(strings.HasPrefix(r, "usr/share/doc/") && filepath.Base(r) == "copyright")
	}
	// Walk bottom-up: files first, then directories left empty.
	var dirs []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		if keep(p) {
			return nil
		}
		return os.Remove(p)
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i > 0; i-- { // dirs[0] is path itself: kept
		os.Remove(dirs[i]) // fails when not empty: a kept file is inside
	}
	return nil
}
