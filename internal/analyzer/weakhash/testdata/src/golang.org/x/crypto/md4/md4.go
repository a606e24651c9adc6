// Package md4 is a stub of golang.org/x/crypto/md4.
package md4

import "hash"

func New() hash.Hash { return nil }
