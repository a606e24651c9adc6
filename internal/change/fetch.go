package change

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Fetch fetches the commits revs (full object names) from the repository
// at remote into l.Dir, shallowly (their trees, not their history), making
// l.Dir a bare repository first when it is not one. Each commit is kept
// under refs/quorum/<sha> so later reads find it; a commit already there is
// not fetched again.
//
// header, when not empty, is sent with every HTTP request (an
// Authorization header with a token, say). It reaches git through its
// environment (GIT_CONFIG_COUNT), never through its arguments, the URL or
// a configuration file, so it is neither written to disk nor visible in
// the process list. Only the remote's own scheme (http or https) is let
// through; every other protocol stays off, as for any other git command.
func (l *Local) Fetch(ctx context.Context, remote, header string, revs ...string) error {
	u, err := url.Parse(remote)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return errors.New("fetch: the remote must be an http(s) URL without credentials")
	}
	if strings.ContainsAny(header, "\r\n") {
		return errors.New("fetch: invalid header")
	}
	for _, rev := range revs {
		if len(rev) < 40 || strings.Trim(rev, "0123456789abcdef") != "" {
			return fmt.Errorf("fetch: %w: %q is not a full object name", ErrInvalidRef, rev)
		}
	}
	if err := l.initBare(ctx); err != nil {
		return err
	}
	// Commits fetched before (a base many pull requests share, a head
	// reviewed again) are not fetched again.
	var refspecs []string
	for _, rev := range revs {
		if _, err := l.resolve(ctx, rev); err == nil {
			continue
		}
		refspecs = append(refspecs, "+"+rev+":refs/quorum/"+rev)
	}
	if len(refspecs) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.gitTimeout())
	defer cancel()
	args := append([]string{
		"-c", "protocol." + u.Scheme + ".allow=always",
		"-c", "http.followRedirects=false",
		"-c", "credential.helper=",
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
		"--depth=1", "--", remote,
	}, refspecs...)
	cmd := l.command(ctx, args...)
	if header != "" {
		cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0="+header)
	}
	stderr := &headBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("git fetch: %w", ctx.Err())
		}
		return fmt.Errorf("git fetch: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// initBare makes l.Dir a bare repository unless it is one already.
func (l *Local) initBare(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(l.Dir, "HEAD")); err == nil {
		return nil
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	if _, err := l.run(ctx, 4096, "init", "--quiet", "--bare", "."); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	return nil
}
