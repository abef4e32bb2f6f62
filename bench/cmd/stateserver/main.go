// Command stateserver serves an in-memory Terraform state store for the
// http backend on 127.0.0.1 (bench/internal/statehttp) until it is killed,
// printing its URL first: bench/mesh-floor.sh runs Terraform's own floor
// with remote-style state through it.
package main

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/ztfabric/terraform-provider-zerotrust/bench/internal/statehttp"
)

func main() {
	url, stop, err := statehttp.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	fmt.Println(url)
	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGTERM, os.Interrupt)
	<-done
}
