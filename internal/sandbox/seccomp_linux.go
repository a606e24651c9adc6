package sandbox

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// The seccomp filter every confined program runs under, after the manner
// of Flatpak's (bubblewrap's --seccomp): the system calls a parser of
// files never needs and that are kernel attack surface or a way out of
// the namespaces fail with EPERM; clone3 fails with ENOSYS, so that libc
// falls back to clone, whose flags the filter can read; a clone or
// unshare that asks for a new user namespace fails, which keeps a
// confined program from making one even where bubblewrap, run by root,
// cannot forbid it (--disable-userns needs a user namespace of its own).
// A system call of another architecture's ABI (i386 on amd64) kills the
// program.

// denied fail with EPERM.
var denied = []uint32{
	unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_KEXEC_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_SYSLOG, unix.SYS_ACCT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT,
}

// unsupported fail with ENOSYS: callers fall back (libc's clone3 to clone,
// libuv's io_uring to threads).
var unsupported = []uint32{unix.SYS_CLONE3, unix.SYS_IO_URING_SETUP}

// seccompProgram returns the filter as bubblewrap reads it (struct
// sock_filter, native byte order), or nil where none is written for this
// architecture.
func seccompProgram() []byte {
	if auditArch == 0 {
		return nil
	}
	type insn struct {
		code   uint16
		jt, jf uint8
		k      uint32
	}
	const (
		ldAbs  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge    = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset   = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill   = unix.SECCOMP_RET_KILL_PROCESS
		// offsets in struct seccomp_data
		offNr   = 0
		offArch = 4
		offArg0 = 16 // the low 32 bits of args[0], little-endian
	)
	// The tail of the program, which the checks jump forward to:
	//   [allow] [eperm] [enosys] [clone check: ld arg0; jset NEWUSER; allow; eperm]
	var body []insn
	// Jumps are relative: the targets are counted from the end, filled
	// in once the body's length is known.
	type jump struct {
		at     int
		target string
	}
	var jumps []jump
	emit := func(i insn, target string) {
		if target != "" {
			jumps = append(jumps, jump{len(body), target})
		}
		body = append(body, i)
	}
	emit(insn{code: ldAbs, k: offArch}, "")
	emit(insn{code: jeq, jt: 1, k: auditArch}, "")
	emit(insn{code: ret, k: kill}, "")
	emit(insn{code: ldAbs, k: offNr}, "")
	if x32Bit != 0 {
		emit(insn{code: jge, k: x32Bit}, "eperm")
	}
	for _, nr := range denied {
		emit(insn{code: jeq, k: nr}, "eperm")
	}
	for _, nr := range unsupported {
		emit(insn{code: jeq, k: nr}, "enosys")
	}
	emit(insn{code: jeq, k: unix.SYS_CLONE}, "clone")
	tail := map[string]int{}
	tail["allow"] = len(body)
	body = append(body, insn{code: ret, k: allow})
	tail["eperm"] = len(body)
	body = append(body, insn{code: ret, k: eperm})
	tail["enosys"] = len(body)
	body = append(body, insn{code: ret, k: enosys})
	tail["clone"] = len(body)
	body = append(body,
		insn{code: ldAbs, k: offArg0},
		insn{code: jset, jt: 1, k: unix.CLONE_NEWUSER},
		insn{code: ret, k: allow},
		insn{code: ret, k: eperm},
	)
	for _, j := range jumps {
		off := tail[j.target] - j.at - 1
		if off > 255 {
			panic("sandbox: seccomp jump too long")
		}
		body[j.at].jt = uint8(off)
	}
	out := make([]byte, 0, 8*len(body))
	for _, i := range body {
		out = binary.NativeEndian.AppendUint16(out, i.code)
		out = append(out, i.jt, i.jf)
		out = binary.NativeEndian.AppendUint32(out, i.k)
	}
	return out
}
