// Package resources samples a server's resources at an interval: memory (RSS), CPU, open file
// descriptors, threads and processes, for the load engine's process report and its leak
// analysis (loadgen/leak).
//
// Three [Sampler]s cover the ways a server can be observed:
//
//   - [ProcessTree]: a process and all its descendants, read with gopsutil (Linux /proc,
//     macOS sysctl/libproc, Windows APIs), for a stdio server we spawned (`npx` → `node` →
//     workers all count) or a local server named by its PID (`--server-pid`). RSS is the sum
//     of the members' resident sets, so pages shared between them count once per member, as
//     `ps` and `top` count them.
//   - [Cgroup]: a cgroup v2 directory (memory.current, cpu.stat, cgroup.procs, pids.current),
//     for a server in a container or a systemd unit. memory.current is all the memory the
//     cgroup is charged for: anonymous memory, page cache and kernel memory.
//   - [Prometheus]: a `/metrics` URL exposing the standard process collector
//     (process_resident_memory_bytes, process_cpu_seconds_total, process_open_fds), parsed
//     with the Prometheus text-format library; for a remote server that exports them (Go's
//     client_golang and Node's prom-client do by default).
//
// Not every source knows every figure: [Sample.Have] says which fields were measured.
// CPU is a percentage of one core over the interval since the previous sample (200 is two
// cores busy); the first sample of a sampler has no previous one and reports the average since
// the process started when the source says when that was, else no CPU figure.
//
// [Watch] runs a sampler at an interval on the caller's goroutine, bounding each sample by a
// deadline, so sampling never holds up the load it observes.
package resources
