package a

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
)

type User struct {
	Name     string
	Password string
	Email    string
}

// The shape: a weak hash passed as a value, keyed with a password.
func Sign(username, password string, msg []byte) []byte {
	mac := hmac.New(sha1.New, []byte(username+password)) // want `HMAC-SHA-1 keyed with a password \(password\)`
	mac.Write(msg)
	return mac.Sum(nil)
}

func HashPassword(u *User) [16]byte {
	return md5.Sum([]byte(u.Password)) // want `MD5 of a password \(u.Password\)`
}

func StoreCredentials(w io.Writer, user, pass string) {
	h := sha1.New() // want `SHA-1 of a password \(pass\)`
	data := user + ":" + pass
	io.WriteString(h, data)
	fmt.Fprintf(w, "%x", h.Sum(nil))
}

func FromForm(r *http.Request) string {
	pw := r.FormValue("passwd")
	sum := md5.Sum([]byte(pw)) // want `MD5 of a password \("passwd"\)`
	return hex.EncodeToString(sum[:])
}

func SecretKey() [20]byte {
	return sha1.Sum([]byte(os.Getenv("APP_SECRET"))) // want `SHA-1 of a secret \("APP_SECRET"\)`
}

func encodePassword(s string) string {
	h := md5.New() // want `MD5 in encodePassword`
	h.Write([]byte(s))
	return hex.EncodeToString(h.Sum(nil))
}

// MD5 is a helper: its callers say what it hashes.
func MD5(s string) string { // want MD5:"hashes MD5 of parameters 0"
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func Login(u *User, given string) bool { // want Login:"hashes MD5 of parameters 1"
	return MD5(given) == u.Password || MD5(u.Password) == given // want `MD5 \(through a.MD5\) of a password \(u.Password\)`
}

// ok: checksums, ETags, cache keys, git object ids.
func ETag(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return fmt.Sprintf(`"%x"`, h.Sum(nil)), nil
}

func CacheKey(u *User) string {
	return MD5(u.Name + u.Email)
}

func ObjectID(content []byte) [20]byte { // want ObjectID:"hashes SHA-1 of parameters 0"
	return sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(content))), content...))
}

// ok: HMAC-SHA1 keyed with a secret is a sound MAC (TOTP, webhooks).
func Webhook(secret, body []byte) []byte {
	mac := hmac.New(sha1.New, secret)
	mac.Write(body)
	return mac.Sum(nil)
}

// ok: a strong hash of a password is not this rule's.
func Strong(password string) [32]byte {
	return sha256.Sum256([]byte(password))
}
