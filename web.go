package streamsql

import (
	"context"
	"errors"
	"fmt"

	"github.com/streamsql/streamsql/internal/job"
	"github.com/streamsql/streamsql/internal/web"
)

// serveHTTP starts the metrics endpoint and the dashboard the configuration asks for.
func (s *Session) serveHTTP() error {
	for _, srv := range []struct {
		what, flag string
		start      func(addr string) (*web.Server, error)
		addr       *string
	}{
		{"metrics endpoint", s.cfg.MetricsAddr, func(addr string) (*web.Server, error) { return web.Serve(addr, web.MetricsHandler(webJobs{s})) }, &s.MetricsAddr},
		{"dashboard", s.cfg.WebAddr, func(addr string) (*web.Server, error) { return web.Serve(addr, web.Handler(webJobs{s})) }, &s.WebAddr},
	} {
		if srv.flag == "" {
			continue
		}
		addr, public, err := web.Addr(srv.flag)
		if err != nil {
			return fmt.Errorf("%s: %w", srv.what, err)
		}
		server, err := srv.start(addr)
		if err != nil {
			return fmt.Errorf("%s: %w", srv.what, err)
		}
		s.servers = append(s.servers, server)
		*srv.addr = server.Addr
		path := map[string]string{"metrics endpoint": "/metrics", "dashboard": "/"}[srv.what]
		fmt.Fprintf(s.cfg.Err, "[INFO] the %s is at http://%s%s\n", srv.what, server.Addr, path)
		if public {
			fmt.Fprintf(s.cfg.Err, "[WARNING] the %s listens on %s, beyond this machine, without authentication\n", srv.what, server.Addr)
		}
	}
	return nil
}

// webJobs gives the dashboard the session's jobs.
type webJobs struct{ s *Session }

func (w webJobs) JobMetrics() []job.Metrics { return w.s.JobMetrics() }

func (w webJobs) Savepoint(ctx context.Context, name, target string) (string, error) {
	j := w.s.Job(name)
	if j == nil {
		return "", errors.New("no job named '" + name + "'")
	}
	return j.Savepoint(ctx, absPath(target))
}

func (w webJobs) Stop(ctx context.Context, name string, drain, savepoint bool, target string) (string, error) {
	j := w.s.Job(name)
	if j == nil {
		return "", errors.New("no job named '" + name + "'")
	}
	if savepoint {
		return w.s.StopJobWithSavepoint(ctx, j, drain, absPath(target))
	}
	return "", w.s.StopJob(ctx, j, drain)
}
