package migrations

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestAll(t *testing.T) {
	list, err := All()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no migrations embedded")
	}
	if list[0].Version != 1 || list[0].Name != "turns" {
		t.Fatalf("first migration = %d %q, want 1 turns", list[0].Version, list[0].Name)
	}
	for i, m := range list {
		if m.Version != i+1 {
			t.Errorf("migration %d has version %d", i, m.Version)
		}
		if strings.TrimSpace(m.SQL) == "" {
			t.Errorf("migration %d (%s) is empty", m.Version, m.Name)
		}
	}
}

func TestParse(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, tt := range []struct {
		name    string
		fsys    fstest.MapFS
		want    []int
		wantErr string
	}{
		{"empty", fstest.MapFS{}, nil, ""},
		{"sorted", fstest.MapFS{
			"0002_b.sql": file("B"), "0001_a.sql": file("A"), "README": file("x"),
		}, []int{1, 2}, ""},
		{"gap", fstest.MapFS{"0001_a.sql": file("A"), "0003_c.sql": file("C")}, nil, "out of sequence"},
		{"duplicate", fstest.MapFS{"0001_a.sql": file("A"), "0001_b.sql": file("B")}, nil, "out of sequence"},
		{"no name", fstest.MapFS{"0001.sql": file("A")}, nil, "want a name"},
		{"short number", fstest.MapFS{"1_a.sql": file("A")}, nil, "want a name"},
		{"not a number", fstest.MapFS{"000x_a.sql": file("A")}, nil, "not a positive number"},
		{"zero", fstest.MapFS{"0000_a.sql": file("A")}, nil, "not a positive number"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list, err := parse(tt.fsys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != len(tt.want) {
				t.Fatalf("got %d migrations, want %d", len(list), len(tt.want))
			}
			for i, v := range tt.want {
				if list[i].Version != v {
					t.Errorf("list[%d].Version = %d, want %d", i, list[i].Version, v)
				}
			}
		})
	}
}
