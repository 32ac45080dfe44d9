package main

import (
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func pngSize(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg.Width, cfg.Height
}

func TestAttn(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if st, _, errs := runCmd(tiny(ck, "--n_layers", "2", "--max_iters", "10")...); st != 0 {
		t.Fatalf("train: status %d: %s", st, errs)
	}
	out := filepath.Join(dir, "maps")
	st, stdout, errs := runCmd("attn", "--checkpoint", ck, "--prompt", "abc.de", "--out", out)
	if st != 0 {
		t.Fatalf("attn: status %d: %s", st, errs)
	}
	if !strings.Contains(stdout, "2 layers × 2 heads over 6 tokens: wrote 6 images") {
		t.Errorf("attn printed %q", stdout)
	}
	for _, name := range []string{"layer0_head0", "layer0_head1", "layer0", "layer1_head0", "layer1_head1", "layer1"} {
		p := filepath.Join(out, name+".png")
		if w, h := pngSize(t, p); w < 200 || h < 200 {
			t.Errorf("%s is %dx%d", p, w, h)
		}
		if !strings.Contains(stdout, p) {
			t.Errorf("attn did not list %s", p)
		}
	}

	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"attn", "--checkpoint", ck}, 2, "--prompt is empty"},
		{[]string{"attn", "--checkpoint", ck, "--prompt", strings.Repeat("a", 17), "--out", out}, 2, "--prompt has 17 tokens, more than the model's block size 16"},
		{[]string{"attn", "--checkpoint", ck, "--prompt", "aé", "--out", out}, 2, "--prompt"},
		{[]string{"attn", "--checkpoint", filepath.Join(dir, "none"), "--prompt", "ab"}, 1, "none"},
		{[]string{"attn", "--bogus"}, 2, "flag provided but not defined"},
	} {
		st, _, errs := runCmd(c.args...)
		if st != c.status || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: status %d, stderr %q; want %d and one line containing %q", c.args, st, errs, c.status, c.want)
		}
	}
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// TestCompare trains both runs of compare and checks its CSV against the
// two runs' own loss logs, and its chart.
func TestCompare(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cmp")
	args := []string{"compare", "--checkpoint_dir", dir, "--d_model", "16", "--n_heads", "4", "--n_layers", "1",
		"--block_size", "16", "--batch_size", "4", "--eval_iters", "2", "--eval_interval", "10", "--max_iters", "30", "--lr", "1e-2"}
	st, stdout, errs := runCmd(args...)
	if st != 0 {
		t.Fatalf("compare: status %d: %s", st, errs)
	}
	if !strings.Contains(stdout, "final validation loss: 1 head ") || !strings.Contains(stdout, ", 4 heads ") {
		t.Errorf("compare printed %q", stdout)
	}
	tab := readCSVFile(t, filepath.Join(dir, "compare.csv"))
	one := readCSVFile(t, filepath.Join(dir, "1head", "loss.csv"))
	four := readCSVFile(t, filepath.Join(dir, "4heads", "loss.csv"))
	if got := strings.Join(tab[0], ","); got != "step,train_loss_1head,val_loss_1head,train_loss_4heads,val_loss_4heads" {
		t.Errorf("header %q", got)
	}
	if len(tab) != 5 || len(one) != 5 || len(four) != 5 { // header + steps 0, 10, 20, 30
		t.Fatalf("%d, %d and %d rows", len(tab), len(one), len(four))
	}
	for i := 1; i < len(tab); i++ {
		want := []string{one[i][0], one[i][1], one[i][2], four[i][1], four[i][2]}
		if strings.Join(tab[i], ",") != strings.Join(want, ",") {
			t.Errorf("row %d: %q, the runs logged %q", i, tab[i], want)
		}
	}
	differ := false
	for _, r := range tab[2:] {
		differ = differ || r[1] != r[3] || r[2] != r[4]
	}
	if !differ {
		t.Errorf("both runs logged the same losses %q: was the second run really multi-head?", tab)
	}
	if w, h := pngSize(t, filepath.Join(dir, "compare.png")); w != 576 || h != 384 {
		t.Errorf("compare.png is %dx%d", w, h)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--n_heads", "1"}, "--n_heads 1: compare needs at least 2"},
		{[]string{"compare", "--resume"}, "--resume: compare always trains both runs from the start"},
		{[]string{"compare", "--d_model", "30"}, "--d_model 30 is not a multiple of --n_heads 4"},
	} {
		st, _, errs := runCmd(c.args...)
		if st != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", c.args, st, errs, c.want)
		}
	}
	// A second compare into the same directory refuses to overwrite the
	// runs' checkpoints without --force.
	if st, _, errs := runCmd(args...); st != 1 || !strings.Contains(errs, "--force") {
		t.Errorf("second compare: status %d, stderr %q", st, errs)
	}
	if st, _, errs := runCmd(append(args, "--force")...); st != 0 {
		t.Errorf("compare --force: status %d, stderr %q", st, errs)
	}
}
