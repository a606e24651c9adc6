package llm

import "testing"

func TestSuggestedPatchAppliesWithGit(t *testing.T) {
	t.Parallel()
	const five = "one\ntwo\nthree\nfour\nfive\n"
	for _, tc := range []struct {
		name        string
		file        string
		line, end   int
		replacement string
		want        string // the file after git apply; "" for no patch
	}{
		{"middle line", five, 3, 3, "THREE", "one\ntwo\nTHREE\nfour\nfive\n"},
		{"first line", five, 1, 1, "ONE", "ONE\ntwo\nthree\nfour\nfive\n"},
		{"last line", five, 5, 5, "FIVE\n", "one\ntwo\nthree\nfour\nFIVE\n"},
		{"range to more lines", five, 2, 3, "2\n2.5\n3", "one\n2\n2.5\n3\nfour\nfive\n"},
		{"delete lines", five, 2, 4, "", "one\nfive\n"},
		{"no newline at EOF, last line", "a\nb\nc", 3, 3, "C", "a\nb\nC"},
		{"no newline at EOF, context at end", "a\nb\nc\nd", 2, 2, "B", "a\nB\nc\nd"},
		{"CRLF kept", "a\r\nb\r\nc\r\n", 2, 2, "B", "a\r\nB\r\nc\r\n"},
		{"long file, context bounded", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", 5, 5, "five", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n"},
		{"unchanged", five, 2, 2, "two", ""},
		{"beyond the file", five, 5, 7, "x", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			patch := suggestedPatch("dir/f.txt", []byte(tc.file), tc.line, tc.end, tc.replacement)
			if tc.want == "" {
				if patch != "" {
					t.Fatalf("patch for a no-op:\n%s", patch)
				}
				return
			}
			r := newRepo(t)
			r.commit(map[string]string{"dir/f.txt": tc.file})
			if got := r.apply(patch, "dir/f.txt"); string(got) != tc.want {
				t.Errorf("after the patch %q, want %q\npatch:\n%s", got, tc.want, patch)
			}
		})
	}
}
