package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// server is one `engram serve` process that teambench started.
type server struct {
	name string
	addr string // host:port
	home string
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done is closed
}

// serverEnv is the environment of a server: the caller's without its
// ENGRAM_* variables (a developer's ENGRAM_EMBEDDER must not change what is
// measured), then the settings of the configuration.
func serverEnv(addr, pgURL string, sharedPalace bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ENGRAM_") {
			env = append(env, kv)
		}
	}
	env = append(env, "ENGRAM_ADDR="+addr, "ENGRAM_EMBEDDER=none", "ENGRAM_EXTRACTOR=none", "ENGRAM_LOG_LEVEL=warn")
	if pgURL != "" {
		env = append(env, "ENGRAM_STORE=postgres", "ENGRAM_POSTGRES_URL="+pgURL)
	}
	if sharedPalace {
		env = append(env, "ENGRAM_PALACE=postgres")
	}
	return env
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startServer starts `bin --home dir/name serve` on a free port and waits
// until its /v1/health answers 200. A server that exits first is an error
// with the tail of its log.
func startServer(ctx context.Context, bin, dir, name, pgURL string, sharedPalace bool) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &server{name: name, addr: addr, home: filepath.Join(dir, name), log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	if err := os.MkdirAll(s.home, 0o700); err != nil {
		return nil, err
	}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, "--home", s.home, "serve")
	s.cmd.Env = serverEnv(addr, pgURL, sharedPalace)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		s.err = s.cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var h health
		if err := s.get(ctx, "/v1/health", &h); err == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("server %s exited before it served (%v): %s", name, s.err, tail(s.log))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("server %s did not answer /v1/health on %s within 2 minutes: %s", name, addr, tail(s.log))
		}
	}
}

// stop sends SIGTERM (engram finishes in-flight requests and closes its
// stores), then SIGKILL if the server is still there after 30 s.
func (s *server) stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("server %s did not stop within 30 s of SIGTERM: killed", s.name)
	}
	var ee *exec.ExitError
	if s.err != nil && !errors.As(s.err, &ee) {
		return s.err
	}
	if s.err != nil {
		return fmt.Errorf("server %s: %v: %s", s.name, s.err, tail(s.log))
	}
	return nil
}

// tail returns the last lines of a log, for an error message.
func tail(file string) string {
	b, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return fmt.Sprintf("log %s:\n%s", file, strings.Join(lines, "\n"))
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Minute}

// apiError is an answer other than 2xx.
type apiError struct {
	status int
	body   string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

func (s *server) do(ctx context.Context, method, path string, in, out any) error {
	var body *bytes.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	} else {
		body = bytes.NewReader(nil)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+s.addr+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &apiError{resp.StatusCode, strings.TrimSpace(buf.String())}
	}
	if out != nil {
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			return fmt.Errorf("%s %s: the answer is not what teambench reads: %w", method, path, err)
		}
	}
	return nil
}

func (s *server) get(ctx context.Context, path string, out any) error {
	return s.do(ctx, http.MethodGet, path, nil, out)
}

func (s *server) post(ctx context.Context, path string, in, out any) error {
	return s.do(ctx, http.MethodPost, path, in, out)
}

type health struct {
	Status     string `json:"status"`
	ArchiveSeq int64  `json:"archive_seq"`
	IndexedSeq int64  `json:"indexed_seq"`
	IndexLag   int64  `json:"index_lag"`
}

// withDatabase returns the postgres:// URL raw with its database replaced
// by name.
func withDatabase(raw, name string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", fmt.Errorf("%q is not a postgres://USER@HOST:PORT/DB URL", redactURL(raw))
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}

// redactURL hides a password in a URL for a message.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// createDatabase makes an empty database for one configuration and returns
// its URL and a function that drops it.
func createDatabase(ctx context.Context, base, name string) (string, func() error, error) {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s: %w", redactURL(base), err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := withDatabase(base, name)
	if err != nil {
		return "", nil, err
	}
	drop := func() error {
		// A fresh context: the drop runs after an interrupt too.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return fmt.Errorf("connect to drop %s: %w", name, err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	return u, drop, nil
}

// startCluster runs `script start PORT`, which prints the URL of the new
// cluster's database, and returns it with a function that deletes the
// cluster (`script stop PORT`).
func startCluster(ctx context.Context, script string, port int) (string, func() error, error) {
	p := strconv.Itoa(port)
	// The script's start takes over a cluster already running on the port,
	// and stop would then delete it: a cluster teambench did not make is
	// for -postgres.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", p), time.Second); err == nil {
		c.Close()
		return "", nil, fmt.Errorf("-cluster %d: something already listens on that port; give a free port, or -postgres URL to use a server that runs", port)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script, "start", p)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	stop := func() error {
		out, err := exec.Command(script, "stop", p).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s stop %s: %v: %s", script, p, err, out)
		}
		return nil
	}
	if err := cmd.Run(); err != nil {
		_ = stop()
		return "", nil, fmt.Errorf("%s start %s: %v: %s", script, p, err, strings.TrimSpace(stderr.String()))
	}
	u := strings.TrimSpace(stdout.String())
	if _, err := withDatabase(u, "x"); err != nil {
		_ = stop()
		return "", nil, fmt.Errorf("%s start %s printed no URL: %w", script, p, err)
	}
	return u, stop, nil
}
