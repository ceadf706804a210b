// Package release holds no code: its tests check the release files at the repository root,
// .goreleaser.yaml (with goreleaser check, and a build with its link flags) and the
// Dockerfile (a static build with the same flags, a non-root user, the image name the
// Kubernetes example runs).
package release
