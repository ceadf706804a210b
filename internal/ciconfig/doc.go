// Package ciconfig writes CI pipelines that run mcpspec: a GitHub Actions workflow, a GitLab CI
// file or a plain shell script, from one [Options] value and text/template templates.
//
// It knows nothing of the command line: [Detect] guesses the platform from a repository's
// files, [Render] writes the pipeline, and [Path] says where it belongs. The pipeline installs
// mcpspec, runs the repository's collections with the JUnit and HTML reporters, publishes the
// reports, and, as asked by [Options.Checks], audits the server (SARIF), gates on its score and
// runs a short, bounded load test.
package ciconfig
