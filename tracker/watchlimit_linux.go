package tracker

import "syscall"

// remoteFSMagic names the network file systems by statfs's f_type.
var remoteFSMagic = map[int64]string{
	0x6969:     "nfs",
	0x517b:     "smb",
	0xff534d42: "cifs",
	0xfe534d42: "smb2",
	0x01021997: "9p", // WSL2's /mnt/c, virtual machines' shares
	0x5346414f: "afs",
	0x6b414653: "afs",
	0x73757245: "coda",
	0x564c:     "ncp",
	0x00c36400: "ceph",
	0x786f4256: "vboxsf",
}

// remoteFS names the network file system root is on ("" for a local
// one, or when statfs fails).
func remoteFS(root string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return ""
	}
	return remoteFSMagic[int64(st.Type)&0xffffffff]
}
