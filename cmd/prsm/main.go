// Command prsm is the one prsm binary: the server, the CLI and the agent hook.
package main

import "os"

func main() { os.Exit(Main()) }
