// Package version holds the build's release, set with -ldflags at build time.
package version

// Version is the release of this build ("dev" when built without make).
var Version = "dev"
