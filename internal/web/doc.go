// Package web serves a process's jobs over HTTP: Prometheus metrics (--metrics-addr),
// and the dashboard with its REST API shaped like Flink's (--web-addr). It reads the
// jobs' live figures and asks for savepoints and stops through the Jobs interface, so
// it knows nothing of sessions, plans or the runtime.
package web
