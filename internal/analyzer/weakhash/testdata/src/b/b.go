package b

import (
	"a"
	"crypto/hmac"
	"crypto/md5"

	"golang.org/x/crypto/md4"
)

type Account struct{ Login, Passwd string }

func Check(acc Account) string {
	return a.MD5(acc.Passwd) // want `MD5 \(through a.MD5\) of a password \(acc.Passwd\)`
}

func Peppered(pepper []byte, password string) []byte {
	mac := hmac.New(md5.New, pepper) // want `MD5 of a password \(password\)`
	mac.Write([]byte(password))
	return mac.Sum(nil)
}

func NTLM(password string) []byte {
	h := md4.New() // want `MD4 of a password \(password\)`
	h.Write([]byte(password))
	return h.Sum(nil)
}

func Name(acc Account) string {
	return a.MD5(acc.Login)
}
