// Command amd64 runs every avo generator of this module for package
// kernels/amd64, so that the package has one go:generate line and a new
// family's generator is found without editing it.
//
// Usage:
//
//	go run ./amd64 -dir ../../kernels/amd64
//
// A generator is a directory of this module holding a main package that
// imports avo's build package (asm/gen/FAMILY); neon, internal and this
// command are not. Each is run from this module's root as
//
//	go run ./FAMILY [-table DIR/FAMILY_kernels_amd64.go] -out DIR/FAMILY_amd64.s -stubs DIR/FAMILY_stubs_amd64.go -pkg amd64
//
// with -table for the generators that define that flag (they also write
// their driver's kernel tables in Go). avo writes the command line into
// the generated files' headers, so the arguments keep this order.
package main

import (
	"flag"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	dir := flag.String("dir", "", "output directory (kernels/amd64)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("amd64: ")
	if *dir == "" {
		log.Fatal("-dir is required")
	}
	gens, err := generators(".")
	if err != nil {
		log.Fatal(err)
	}
	if len(gens) == 0 {
		log.Fatal("no generator found: run from asm/gen")
	}
	for _, g := range gens {
		var args []string
		if g.table {
			args = append(args, "-table", filepath.Join(*dir, g.name+"_kernels_amd64.go"))
		}
		args = append(args,
			"-out", filepath.Join(*dir, g.name+"_amd64.s"),
			"-stubs", filepath.Join(*dir, g.name+"_stubs_amd64.go"),
			"-pkg", "amd64")
		cmd := exec.Command("go", append([]string{"run", "./" + g.name}, args...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			log.Fatalf("%s: %v", g.name, err)
		}
	}
}

// generator is one avo program of the module.
type generator struct {
	name  string // its directory, the family's name
	table bool   // whether it takes -table
}

// generators returns the avo programs in the directories under root, in
// the order of their names.
func generators(root string) ([]generator, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []generator
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "neon" || e.Name() == "internal" || e.Name() == "amd64" {
			continue
		}
		files, err := filepath.Glob(filepath.Join(root, e.Name(), "*.go"))
		if err != nil {
			return nil, err
		}
		var isMain, avo, table bool
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			s := string(src)
			isMain = isMain || strings.Contains(s, "\npackage main\n") || strings.HasPrefix(s, "package main\n")
			avo = avo || strings.Contains(s, `"github.com/mmcloughlin/avo/build"`)
			table = table || strings.Contains(s, `flag.String("table"`)
		}
		if isMain && avo {
			out = append(out, generator{e.Name(), table})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}
