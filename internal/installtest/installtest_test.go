package installtest

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestRootFindsTheScript(t *testing.T) {
	root, err := Root("scripts/llm/install")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("Root = %s, which is not the repository's root: %v", root, err)
	}
	if _, err := Root("scripts/no-such-script"); err == nil || !strings.Contains(err.Error(), "no scripts/no-such-script above") {
		t.Errorf("a missing script: err = %v", err)
	}
}

func TestFreePortCanBeListenedOn(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	l.Close()
}
