package a

import "crypto/md5"

func hashPasswordForTest(password string) [16]byte {
	return md5.Sum([]byte(password)) // ok: tests are not attack surface
}
