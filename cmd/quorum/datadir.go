package main

import (
	"errors"
	"path/filepath"
	"strings"
)

// dataDirDefault says where the embedded database is when neither
// --data-dir nor QUORUM_DATA_DIR names a directory, in the flag's help and
// the configuration reference.
const dataDirDefault = "$STATE_DIRECTORY under a systemd unit with StateDirectory=, else $XDG_DATA_HOME/quorum, i.e. ~/.local/share/quorum"

// defaultDataDir is the data directory every command uses when none is
// given, wherever it is run from, so that review --save, token and serve
// share one database: the unit's state directory under systemd
// (StateDirectory= sets $STATE_DIRECTORY, a colon-separated list of which
// quorum's is the first), else the user's data directory of the XDG base
// directory specification, whose relative $XDG_DATA_HOME is ignored.
func defaultDataDir(getenv func(string) string) (string, error) {
	if s, _, _ := strings.Cut(getenv("STATE_DIRECTORY"), ":"); filepath.IsAbs(s) {
		return s, nil
	}
	if x := getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "quorum"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "share", "quorum"), nil
	}
	return "", errors.New("no data directory: neither $XDG_DATA_HOME nor $HOME is set; give --data-dir (or QUORUM_DATA_DIR)")
}
