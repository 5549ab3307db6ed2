package tracker

import "syscall"

// remoteFSNames are the network file systems by statfs's f_fstypename.
var remoteFSNames = map[string]bool{"nfs": true, "smbfs": true, "afpfs": true, "webdav": true, "cifs": true}

// remoteFS names the network file system root is on ("" for a local
// one, or when statfs fails).
func remoteFS(root string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return ""
	}
	var b []byte
	for _, c := range st.Fstypename {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	if name := string(b); remoteFSNames[name] {
		return name
	}
	return ""
}
