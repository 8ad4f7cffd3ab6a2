// Package images holds the build contexts of the system template images:
// one directory per template of the catalog, base (the shared base they
// all start from) and common (files every template image copies: its
// entrypoint svc-init and the service scripts; docs/images.md). They are embedded so that svcd can build
// the images wherever it runs; internal/sysimage builds and publishes them.
package images

import "embed"

// FS holds base/, common/ and one directory per system template, each
// with its Dockerfile and the files it copies.
//
//go:embed base common svc-*
var FS embed.FS
