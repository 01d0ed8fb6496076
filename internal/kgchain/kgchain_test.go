package kgchain

import (
	"errors"
	"slices"
	"testing"
)

func TestDirty(t *testing.T) {
	var d Dirty[string]
	d.Mark("b", Key{At: 5})
	d.Mark("a", Key{At: 9})
	d.Mark("b", Key{At: 3})                 // earlier: rebuilt from here
	d.Mark("b", Key{At: 4})                 // later than 3: no change
	d.Mark("a", Key{At: 9, Predicate: "x"}) // the same time, a later predicate
	var got []string
	var from []Key
	if err := d.Each(func(c string, k Key) error { got, from = append(got, c), append(from, k); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"b", "a"}) || from[0] != (Key{At: 3}) || from[1] != (Key{At: 9}) {
		t.Errorf("chains %v from %+v; want b from 3, then a from 9", got, from)
	}
	boom := errors.New("boom")
	n := 0
	if err := d.Each(func(string, Key) error { n++; return boom }); !errors.Is(err, boom) || n != 1 {
		t.Errorf("a failed rebuild: %v after %d calls, want it after 1", err, n)
	}
}
