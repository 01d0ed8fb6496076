package timeexpr

import (
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram/internal/qnorm"
)

// Range is the period [From, To) a temporal expression in a query names,
// and Expr the expression as written (with a preposition it owns: "on April
// 30", "in the last 3 days"). It converts to engram.TimeRange directly.
type Range struct {
	From, To time.Time
	Expr     string
}

// text is a query normalised as qnorm does, with a buffer for the word
// being looked up.
type text struct {
	*qnorm.Text
	key [16]byte
}

func normalize(s string) *text { return &text{Text: qnorm.Normalize(s, false)} }

// Parse finds the first temporal expression in query and resolves it
// against asOf, doing calendar arithmetic in asOf's location. It returns the
// range, and rest, the query with the expression cut out and tidied ("what
// did we decide last week about the port" gives "what did we decide about
// the port"); without an expression, ok is false and rest is query.
//
// It reads English, Chinese and Japanese. The rules, chosen because a range
// usually filters or boosts what recall finds, so that one too narrow hides
// the memory asked for while one a little wide costs almost nothing:
//
//   - Days run midnight to midnight. Weeks start on Monday. "Last week" is
//     the calendar week before this one, "last month" the calendar month.
//   - "N days ago" is that day; with a vague count ("a few", "a couple of",
//     "几", "数", a few = 3) it widens by a day each side. "N weeks ago" is
//     the 7 days centred on the day N weeks back, "N months ago" the 31 days
//     centred on the same day N months back (clamped to the month's end),
//     "N years ago" the 12 months centred on that day: people round these,
//     so a window around the point beats the calendar month it falls in
//     ("three months ago" on 29 November is 14 August to 13 September).
//   - "In the last N days/weeks/months/years" (过去三天, ここ数日) runs from
//     the start of the day N units back through the end of today.
//   - "Recently" (lately, 最近, 近頃) is the last 30 days and today.
//   - A date or month without a year is the most recent one that has begun
//     by asOf: "April 30" asked on 2026-03-01 is 2025-04-30, "in March"
//     asked in March is this March. "Last March" is the most recent March
//     before this month. "On Monday" and "last Monday" are the most recent
//     Monday before today (a week ago when today is Monday); "this Monday"
//     is the one in this week, "next Monday" the first after today.
//   - "Since X" (X以来, Xから) runs from the start of X through today.
//   - Future expressions (tomorrow, next week) resolve as named; whether a
//     future range means anything is the caller's call.
//
// False positives are worse than misses (a missed expression leaves the
// whole archive searched), so words that are also ordinary English need
// context. A month name needs a day ("April 30", "30 April"), a year
// ("March 2024") or a preposition before it ("in", "on", "since", "during",
// "from", "of", "last", "this", "until"); "May", "March", "Mar" and
// "August", which are also verbs and adjectives, need a capital letter
// unless a preposition precedes them, so "we may use Redis" and "we march
// on" are not dates. A bare year needs a preposition ("in 2023"), a weekday
// needs "on", "last", "this", "next", "past" or "since", and "the last
// month" without a preposition ("the last month of the year") is not read
// as a period. Clock times, hours and seasons are not read.
func Parse(query string, asOf time.Time) (r Range, rest string, ok bool) {
	t := normalize(query)
	p := timeParser{t: t, c: newCalendar(asOf)}
	for i := range t.R {
		if !t.canStart(i) {
			continue
		}
		h, ok := p.parseAt(i, false, true)
		if !ok {
			continue
		}
		start, end := i, h.end
		possessive := end+1 < len(t.R) && t.R[end] == '\'' && t.R[end+1] == 's' && (end+2 == len(t.R) || !qnorm.IsSpacedWord(t.R[end+2]))
		tail := end
		switch {
		case possessive: // "yesterday's meeting": the 's goes, the preposition before stays
			tail = end + 2
		case qnorm.IsCJK(t.R[end-1]):
			tail = t.cjkParticle(end)
		default:
			start = t.absorbPreposition(start)
		}
		return Range{From: h.from, To: h.to, Expr: query[t.Lo[start]:t.Hi[end-1]]},
			qnorm.Cut(query, t.Lo[start], t.Hi[tail-1]), true
	}
	return Range{}, query, false
}

// Find returns the temporal expressions of text (at most limit),
// in the order they appear, each resolved against at, the time the text was
// said: Parse's rules, applied to a turn instead of a query.
func Find(text string, at time.Time, limit int) []Range {
	var out []Range
	for rest := text; len(out) < limit; {
		r, next, ok := Parse(rest, at)
		if !ok || len(next) >= len(rest) {
			break
		}
		out = append(out, r)
		rest = next
	}
	return out
}

// Suffix returns the temporal expression that ends s, but for white
// space and one comma ("Next week, " gives "Next week"), as written, with a
// preposition it owns ("on Monday"). The expression must start a word. asOf
// only decides whether a date exists (February 29). ok is false when s does
// not end with one.
func Suffix(s string, asOf time.Time) (expr string, ok bool) {
	t := normalize(s)
	n := len(t.R)
	for n > 0 && t.R[n-1] == ' ' {
		n--
	}
	if n > 0 && t.R[n-1] == ',' {
		n--
	}
	for n > 0 && t.R[n-1] == ' ' {
		n--
	}
	p := timeParser{t: t, c: newCalendar(asOf)}
	for i := range n {
		if !t.canStart(i) {
			continue
		}
		if h, ok := p.parseAt(i, false, false); !ok || h.end != n {
			continue
		}
		start := t.absorbPreposition(i)
		if start > 0 && t.R[start-1] != ' ' && t.R[start-1] != ',' {
			continue
		}
		return s[t.Lo[start]:t.Hi[n-1]], true
	}
	return "", false
}

// timeHit is an expression found at some start: where it ends (a rune index,
// exclusive) and the range it names.
type timeHit struct {
	end      int
	from, to time.Time
}

type timeParser struct {
	t *text
	c calendar
}

// parseAt returns the longest expression starting at rune i. prep says a
// preposition was read just before i (by "since"), which licenses a bare
// month or weekday; since allows "since X" itself.
func (p *timeParser) parseAt(i int, prep, since bool) (timeHit, bool) {
	var best timeHit
	try := func(h timeHit, ok bool) {
		if ok && h.end > best.end && h.from.Before(h.to) {
			best = h
		}
	}
	if qnorm.IsCJK(p.t.R[i]) || isASCIIDigit(p.t.R[i]) {
		try(p.cjkFixed(i))
		try(p.cjkAgo(i))
		try(p.cjkRolling(i))
		try(p.cjkDate(i))
	}
	if !qnorm.IsCJK(p.t.R[i]) {
		try(p.enFixed(i))
		try(p.enRolling(i))
		try(p.enAgo(i))
		try(p.enWeekday(i, prep))
		try(p.enMonthDate(i, prep))
		try(p.enYear(i, prep))
		try(p.iso(i))
		try(p.yearLast(i))
		if since {
			try(p.enSince(i))
		}
	}
	if since {
		try(p.cjkSince(i, best))
	}
	return best, best.end > 0
}

// calendar does date arithmetic in asOf's location, on whole days.
type calendar struct {
	loc     *time.Location
	y       int
	m       time.Month
	d       int
	weekday int // days since Monday
}

func newCalendar(asOf time.Time) calendar {
	y, m, d := asOf.Date()
	return calendar{loc: asOf.Location(), y: y, m: m, d: d, weekday: (int(asOf.Weekday()) + 6) % 7}
}

// day returns the start of the day off days from today.
func (c calendar) day(off int) time.Time { return time.Date(c.y, c.m, c.d+off, 0, 0, 0, 0, c.loc) }

func (c calendar) today() time.Time { return c.day(0) }

// days returns [start of day a, start of day b), both relative to today.
func (c calendar) days(a, b int) (time.Time, time.Time) { return c.day(a), c.day(b) }

// hours returns [today a:00, today b:00), hours that may run past midnight.
func (c calendar) hours(a, b int) (time.Time, time.Time) {
	return time.Date(c.y, c.m, c.d, a, 0, 0, 0, c.loc), time.Date(c.y, c.m, c.d, b, 0, 0, 0, c.loc)
}

// week returns the Monday-to-Monday week off weeks from this one.
func (c calendar) week(off int) (time.Time, time.Time) {
	m := -c.weekday + 7*off
	return c.days(m, m+7)
}

// weekend returns Saturday and Sunday of the week off weeks from this one.
func (c calendar) weekend(off int) (time.Time, time.Time) {
	m := -c.weekday + 7*off
	return c.days(m+5, m+7)
}

// lastWeekend returns the weekend under way, or else the one before.
func (c calendar) lastWeekend() (time.Time, time.Time) {
	if c.weekday >= 5 {
		return c.weekend(0)
	}
	return c.weekend(-1)
}

func (c calendar) month(off int) (time.Time, time.Time) {
	return time.Date(c.y, c.m+time.Month(off), 1, 0, 0, 0, 0, c.loc), time.Date(c.y, c.m+time.Month(off)+1, 1, 0, 0, 0, 0, c.loc)
}

func (c calendar) year(off int) (time.Time, time.Time) {
	return time.Date(c.y+off, 1, 1, 0, 0, 0, 0, c.loc), time.Date(c.y+off+1, 1, 1, 0, 0, 0, 0, c.loc)
}

// recent is what "recently" means: the last 30 days and today.
func (c calendar) recent() (time.Time, time.Time) { return c.days(-30, 1) }

// shiftDays moves t, a midnight, by n days, staying at midnight across DST.
func shiftDays(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d+n, 0, 0, 0, 0, t.Location())
}

// shiftMonths moves t, a midnight, by n months, clamping the day to the
// target month's length (31 March minus one month is 28 or 29 February, not
// 3 March).
func shiftMonths(t time.Time, n int) time.Time {
	y, m, d := t.Date()
	first := time.Date(y, m+time.Month(n), 1, 0, 0, 0, 0, t.Location())
	return time.Date(first.Year(), first.Month(), min(d, monthLen(first.Year(), first.Month())), 0, 0, 0, 0, t.Location())
}

func monthLen(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }

// Units of "N units ago" and "the last N units".
const (
	unitDay = iota
	unitWeek
	unitMonth
	unitYear
	unitHalfMonth // 半个月: 15 days
)

// maxUnitCount bounds N per unit, so arithmetic stays in range and "2023年前"
// is not read as 2023 years ago.
var maxUnitCount = [...]int{unitDay: 36500, unitWeek: 5200, unitMonth: 1200, unitYear: 100, unitHalfMonth: 1}

// ago resolves "n units ago" (see Parse for the windows).
func (c calendar) ago(unit, n int, vague bool) (time.Time, time.Time, bool) {
	if n < 1 || n > maxUnitCount[unit] {
		return time.Time{}, time.Time{}, false
	}
	midnight := c.today()
	var from, to time.Time
	switch unit {
	case unitDay:
		w := 0
		if vague {
			w = 1
		}
		from, to = c.days(-n-w, -n+w+1)
	case unitWeek:
		from, to = c.days(-7*n-3, -7*n+4)
	case unitHalfMonth:
		from, to = c.days(-15-7, -15+8)
	case unitMonth:
		pt := shiftMonths(midnight, -n)
		from, to = shiftDays(pt, -15), shiftDays(pt, 16)
	case unitYear:
		pt := shiftMonths(midnight, -12*n)
		from, to = shiftMonths(pt, -6), shiftMonths(pt, 6)
	}
	return from, to, true
}

// lastN resolves "the last n units": from the start of the day n units back
// through the end of today.
func (c calendar) lastN(unit, n int) (time.Time, time.Time, bool) {
	if n < 1 || n > maxUnitCount[unit] {
		return time.Time{}, time.Time{}, false
	}
	midnight := c.today()
	to := c.day(1)
	switch unit {
	case unitDay:
		return c.day(-n), to, true
	case unitWeek:
		return c.day(-7 * n), to, true
	case unitHalfMonth:
		return c.day(-15), to, true
	case unitMonth:
		return shiftMonths(midnight, -n), to, true
	default:
		return shiftMonths(midnight, -12*n), to, true
	}
}

// monthOf resolves a month named without a year: the most recent one that
// has begun by today, or, with strictlyBefore, the most recent before this
// month ("last March").
func (c calendar) monthOf(m time.Month, strictlyBefore bool) (time.Time, time.Time) {
	y := c.y
	if m > c.m || strictlyBefore && m == c.m {
		y--
	}
	return time.Date(y, m, 1, 0, 0, 0, 0, c.loc), time.Date(y, m+1, 1, 0, 0, 0, 0, c.loc)
}

// date resolves day d of month m in year y, or, for y == 0, the most recent
// such day on or before today (for 29 February, in a leap year).
func (c calendar) date(y int, m time.Month, d int) (time.Time, time.Time, bool) {
	if d < 1 || d > 31 || m < 1 || m > 12 {
		return time.Time{}, time.Time{}, false
	}
	if y == 0 {
		midnight := c.today()
		for y = c.y; y > c.y-8; y-- {
			t := time.Date(y, m, d, 0, 0, 0, 0, c.loc)
			if d <= monthLen(y, m) && !t.After(midnight) {
				return t, shiftDays(t, 1), true
			}
		}
		return time.Time{}, time.Time{}, false
	}
	if d > monthLen(y, m) {
		return time.Time{}, time.Time{}, false
	}
	t := time.Date(y, m, d, 0, 0, 0, 0, c.loc)
	return t, shiftDays(t, 1), true
}

// rangeFunc resolves a fixed expression against the calendar.
type rangeFunc func(c calendar) (time.Time, time.Time)

func hourSpan(a, b int) rangeFunc {
	return func(c calendar) (time.Time, time.Time) { return c.hours(a, b) }
}
func weekSpan(off int) rangeFunc {
	return func(c calendar) (time.Time, time.Time) { return c.week(off) }
}
func monthSpan(off int) rangeFunc {
	return func(c calendar) (time.Time, time.Time) { return c.month(off) }
}
func yearSpan(off int) rangeFunc {
	return func(c calendar) (time.Time, time.Time) { return c.year(off) }
}
func weekendSpan(off int) rangeFunc {
	return func(c calendar) (time.Time, time.Time) { return c.weekend(off) }
}
func lastDaysSpan(n int) rangeFunc {
	return func(c calendar) (time.Time, time.Time) { return c.days(-n, 1) }
}

var (
	spanToday       = hourSpan(0, 24)
	spanTomorrow    = hourSpan(24, 48)
	spanYesterday   = hourSpan(-24, 0)
	spanDayBefore   = hourSpan(-48, -24)
	spanLastNight   = hourSpan(-12, 6) // yesterday noon to 6 in the morning: the evening and the small hours
	spanRecent      = rangeFunc(calendar.recent)
	spanLastWeekend = rangeFunc(calendar.lastWeekend)
)

// fixedExpr is an expression that is always the same words.
type fixedExpr struct {
	words   []rune
	rng     rangeFunc
	notThe  bool // not after "the": "the last month of the year", "the next week or so"
	wordEnd bool // a spaced-script expression: whole words only
}

// enFixedTable holds English expressions made of fixed words.
var enFixedTable = compileFixed([]struct {
	s   string
	rng rangeFunc
}{
	{"today", spanToday}, {"tonight", spanToday}, {"this morning", spanToday}, {"this afternoon", spanToday},
	{"this evening", spanToday}, {"earlier today", spanToday}, {"tomorrow", spanTomorrow},
	{"yesterday", spanYesterday}, {"the day before yesterday", spanDayBefore}, {"day before yesterday", spanDayBefore},
	{"last night", spanLastNight},
	{"this week", weekSpan(0)}, {"earlier this week", weekSpan(0)}, {"last week", weekSpan(-1)}, {"next week", weekSpan(1)},
	{"the week before last", weekSpan(-2)},
	{"this month", monthSpan(0)}, {"earlier this month", monthSpan(0)}, {"last month", monthSpan(-1)}, {"next month", monthSpan(1)},
	{"the month before last", monthSpan(-2)},
	{"this year", yearSpan(0)}, {"earlier this year", yearSpan(0)}, {"last year", yearSpan(-1)}, {"next year", yearSpan(1)},
	{"the year before last", yearSpan(-2)},
	{"this weekend", weekendSpan(0)}, {"last weekend", weekendSpan(-1)}, {"next weekend", weekendSpan(1)},
	{"over the weekend", spanLastWeekend}, {"on the weekend", spanLastWeekend}, {"at the weekend", spanLastWeekend},
	{"this past weekend", spanLastWeekend}, {"past weekend", spanLastWeekend}, {"this past week", lastDaysSpan(7)},
	{"recently", spanRecent}, {"lately", spanRecent}, {"of late", spanRecent},
})

// cjkFixedTable holds Chinese (simplified and traditional) and Japanese
// words that name a period on their own.
var cjkFixedTable = compileFixed([]struct {
	s   string
	rng rangeFunc
}{
	{"今天", spanToday}, {"今日", spanToday}, {"本日", spanToday}, {"きょう", spanToday}, {"今早", spanToday}, {"今朝", spanToday},
	{"今晚", spanToday}, {"今晩", spanToday}, {"今夜", spanToday},
	{"明天", spanTomorrow}, {"明日", spanTomorrow}, {"あした", spanTomorrow},
	{"昨天", spanYesterday}, {"昨日", spanYesterday}, {"きのう", spanYesterday},
	{"昨晚", spanLastNight}, {"昨晩", spanLastNight}, {"昨夜", spanLastNight},
	{"前天", spanDayBefore}, {"一昨日", spanDayBefore}, {"おととい", spanDayBefore},
	{"大前天", hourSpan(-72, -48)},
	{"本周", weekSpan(0)}, {"这周", weekSpan(0)}, {"這週", weekSpan(0)}, {"本週", weekSpan(0)}, {"这个星期", weekSpan(0)},
	{"這個星期", weekSpan(0)}, {"这星期", weekSpan(0)}, {"本星期", weekSpan(0)}, {"今週", weekSpan(0)},
	{"上周", weekSpan(-1)}, {"上週", weekSpan(-1)}, {"上个星期", weekSpan(-1)}, {"上個星期", weekSpan(-1)}, {"上星期", weekSpan(-1)},
	{"上个礼拜", weekSpan(-1)}, {"上個禮拜", weekSpan(-1)}, {"上礼拜", weekSpan(-1)}, {"上禮拜", weekSpan(-1)}, {"先週", weekSpan(-1)},
	{"上上周", weekSpan(-2)}, {"上上个星期", weekSpan(-2)}, {"先々週", weekSpan(-2)}, {"先先週", weekSpan(-2)},
	{"下周", weekSpan(1)}, {"下週", weekSpan(1)}, {"下个星期", weekSpan(1)}, {"下星期", weekSpan(1)}, {"来週", weekSpan(1)}, {"來週", weekSpan(1)},
	{"本月", monthSpan(0)}, {"这个月", monthSpan(0)}, {"這個月", monthSpan(0)}, {"这月", monthSpan(0)}, {"今月", monthSpan(0)},
	{"上个月", monthSpan(-1)}, {"上個月", monthSpan(-1)}, {"上月", monthSpan(-1)}, {"先月", monthSpan(-1)},
	{"上上个月", monthSpan(-2)}, {"先々月", monthSpan(-2)},
	{"下个月", monthSpan(1)}, {"下個月", monthSpan(1)}, {"来月", monthSpan(1)},
	{"今年", yearSpan(0)}, {"本年", yearSpan(0)}, {"去年", yearSpan(-1)}, {"昨年", yearSpan(-1)}, {"一昨年", yearSpan(-2)},
	{"明年", yearSpan(1)}, {"来年", yearSpan(1)},
	{"上周末", weekendSpan(-1)}, {"上个周末", weekendSpan(-1)}, {"上週末", weekendSpan(-1)}, {"先週末", weekendSpan(-1)},
	{"这周末", weekendSpan(0)}, {"本周末", weekendSpan(0)}, {"这个周末", weekendSpan(0)}, {"今週末", weekendSpan(0)},
	{"最近", spanRecent}, {"近期", spanRecent}, {"近来", spanRecent}, {"近來", spanRecent}, {"近頃", spanRecent},
	{"このところ", spanRecent}, {"この頃", spanRecent}, {"近ごろ", spanRecent},
})

func compileFixed(src []struct {
	s   string
	rng rangeFunc
}) map[rune][]fixedExpr {
	out := make(map[rune][]fixedExpr)
	for _, e := range src {
		w := []rune(e.s)
		out[w[0]] = append(out[w[0]], fixedExpr{
			words: w, rng: e.rng,
			notThe:  strings.HasPrefix(e.s, "last ") || strings.HasPrefix(e.s, "next "),
			wordEnd: qnorm.IsSpacedWord(w[0]),
		})
	}
	return out
}

// lookupFixed returns the longest entry of table at i.
func (p *timeParser) lookupFixed(table map[rune][]fixedExpr, i int) (timeHit, bool) {
	var best timeHit
	t := p.t
	for _, f := range table[t.R[i]] {
		j := i + len(f.words)
		if j > len(t.R) || j <= best.end || !slices.Equal(t.R[i:j], f.words) {
			continue
		}
		if f.wordEnd && j < len(t.R) && qnorm.IsSpacedWord(t.R[j]) || f.notThe && t.prevWord(i) == "the" {
			continue
		}
		best.end = j
		best.from, best.to = f.rng(p.c)
	}
	return best, best.end > 0
}

func (p *timeParser) enFixed(i int) (timeHit, bool)  { return p.lookupFixed(enFixedTable, i) }
func (p *timeParser) cjkFixed(i int) (timeHit, bool) { return p.lookupFixed(cjkFixedTable, i) }

// English counts: digits, number words, and the vague "a couple of" and
// "a few" (3).
var enCounts = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}

var enVague = []struct {
	w string
	n int
}{{"a couple of", 2}, {"couple of", 2}, {"a couple", 2}, {"a few", 3}, {"few", 3}}

// enCount reads a count at i; article admits "a" and "an" as one.
func (p *timeParser) enCount(i int, article bool) (n, end int, vague, ok bool) {
	t := p.t
	i = t.skip(i)
	if n, e, ok := t.digits(i, 1, 5); ok && (e == len(t.R) || !qnorm.IsSpacedWord(t.R[e])) {
		return n, e, false, true
	}
	for _, v := range enVague {
		if e, ok := t.word(i, v.w); ok {
			return v.n, e, true, true
		}
	}
	w, _, e := t.wordAt(i)
	if n, ok := enCounts[string(w)]; ok {
		return n, e, false, true
	}
	if article && (string(w) == "a" || string(w) == "an") {
		return 1, e, false, true
	}
	return 0, 0, false, false
}

var enUnits = map[string]int{
	"day": unitDay, "days": unitDay, "week": unitWeek, "weeks": unitWeek,
	"month": unitMonth, "months": unitMonth, "year": unitYear, "years": unitYear,
}

func (p *timeParser) enUnit(i int) (unit, end int, ok bool) {
	w, _, e := p.t.wordAt(i)
	unit, ok = enUnits[string(w)]
	return unit, e, ok
}

// enAgo reads "N units ago".
func (p *timeParser) enAgo(i int) (timeHit, bool) {
	n, j, vague, ok := p.enCount(i, true)
	if !ok {
		return timeHit{}, false
	}
	unit, j, ok := p.enUnit(j)
	if !ok {
		return timeHit{}, false
	}
	j, ok = p.t.word(j, "ago")
	if !ok {
		return timeHit{}, false
	}
	from, to, ok := p.c.ago(unit, n, vague)
	return timeHit{j, from, to}, ok
}

// enRolling reads "[in|over|during|within|for] [the] last|past [N] units".
// Without a count it needs "the" and either a preposition or "past", so
// that "last week" stays the calendar week and "the last month of the
// year" is nothing.
func (p *timeParser) enRolling(i int) (timeHit, bool) {
	t := p.t
	j := i
	prep, the := false, false
	if e, _, ok := t.oneOf(j, "in", "over", "during", "within", "for"); ok {
		j, prep = e, true
	}
	if e, ok := t.word(j, "the"); ok {
		j, the = e, true
	}
	j, kw, ok := t.oneOf(j, "last", "past")
	if !ok {
		return timeHit{}, false
	}
	n, e, _, counted := p.enCount(j, false)
	switch {
	case counted:
		j = e
	case the && (prep || kw == "past"):
		n = 1
	default:
		return timeHit{}, false
	}
	unit, j, ok := p.enUnit(j)
	if !ok {
		return timeHit{}, false
	}
	from, to, ok := p.c.lastN(unit, n)
	return timeHit{j, from, to}, ok
}

var enWeekdays = map[string]int{ // days since Monday
	"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
}

// enWeekday reads "on|last|past|this past|this|next Monday" (or a bare
// weekday after "since").
func (p *timeParser) enWeekday(i int, prep bool) (timeHit, bool) {
	t := p.t
	j, kw, ok := t.oneOf(i, "on", "last", "this past", "past", "this", "next")
	if !ok && !prep || kw == "last" && t.prevWord(i) == "the" {
		return timeHit{}, false
	}
	if !ok {
		j = i
	}
	w, _, e := t.wordAt(j)
	wd, ok := enWeekdays[string(w)]
	if !ok {
		return timeHit{}, false
	}
	var off int
	switch kw {
	case "this":
		off = wd - p.c.weekday
	case "next":
		off = (wd-p.c.weekday+6)%7 + 1
	default: // the most recent before today
		off = -((p.c.weekday-wd+6)%7 + 1)
	}
	from, to := p.c.days(off, off+1)
	return timeHit{e, from, to}, true
}

var enMonths = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
	"december": 12, "dec": 12,
}

// ambiguousMonths are month names that are also common English words.
var ambiguousMonths = map[string]bool{"may": true, "march": true, "mar": true, "august": true}

// month reads a month name at i: the month, where it ends, and whether
// it could be another word (a lower-case "may").
func (p *timeParser) month(i int) (m time.Month, end int, ambiguous, ok bool) {
	t := p.t
	w, s, e := t.wordAt(i)
	m, ok = enMonths[string(w)]
	if !ok {
		return 0, 0, false, false
	}
	// An abbreviation's full stop goes with it when a day follows: "Apr. 30".
	if len(w) <= 4 && e < len(t.R) && t.R[e] == '.' {
		if k := t.skip(e + 1); k < len(t.R) && isASCIIDigit(t.R[k]) {
			e++
		}
	}
	return m, e, ambiguousMonths[string(w)] && !t.Upper[s], true
}

// dayOfMonth reads 1 to 31 with an optional ordinal suffix ("30th").
func (p *timeParser) dayOfMonth(i int) (d, end int, ok bool) {
	t := p.t
	d, e, ok := t.digits(t.skip(i), 1, 2)
	if !ok || d < 1 || d > 31 {
		return 0, 0, false
	}
	if e+2 <= len(t.R) {
		switch string(t.R[e : e+2]) {
		case "st", "nd", "rd", "th":
			e += 2
		}
	}
	if e < len(t.R) && (qnorm.IsSpacedWord(t.R[e]) || t.R[e] == ':') {
		return 0, 0, false
	}
	return d, e, true
}

// year reads a four-digit year from 1900 to 2199, optionally after a comma,
// that is not the start of an ISO date.
func (p *timeParser) year(i int) (y, end int, ok bool) {
	t := p.t
	i = t.skip(i)
	if i < len(t.R) && t.R[i] == ',' {
		i = t.skip(i + 1)
	}
	y, e, ok := t.digits(i, 4, 4)
	if !ok || y < 1900 || y > 2199 || e < len(t.R) && qnorm.IsSpacedWord(t.R[e]) || t.isoSeparatorAt(e) {
		return 0, 0, false
	}
	return y, e, true
}

// enMonthDate reads the forms with a month name: "[on] April 30[th][,]
// [2025]", "[on] [the] 30[th] [of] April [2025]", "[in] March 2024" and
// "in|since|during|from|of|last|this|until March".
func (p *timeParser) enMonthDate(i int, prep bool) (timeHit, bool) {
	t := p.t
	j, kw, hasPrep := t.oneOf(i, "on", "in", "during", "from", "of", "last", "this", "until", "throughout")
	if !hasPrep {
		j = i
	}
	hasPrep = hasPrep || prep
	var (
		m         time.Month
		d, y      int
		ambiguous bool
		ok        bool
	)
	if mm, e, amb, ok := p.month(j); ok { // April 30, 2025 | March 2024 | March
		m, j, ambiguous = mm, e, amb
		if dd, e, ok := p.dayOfMonth(j); ok {
			d, j = dd, e
		}
	} else { // [the] 30th [of] April [2025]
		if e, ok := t.word(j, "the"); ok {
			j = e
		}
		dd, e, ok := p.dayOfMonth(j)
		if !ok {
			return timeHit{}, false
		}
		d, j = dd, e
		if e, ok := t.word(j, "of"); ok {
			j, hasPrep = e, true
		}
		mm, e, amb, ok := p.month(j)
		if !ok {
			return timeHit{}, false
		}
		m, j, ambiguous = mm, e, amb
	}
	if yy, e, ok := p.year(j); ok {
		y, j = yy, e
	}
	if ambiguous && !hasPrep || d == 0 && y == 0 && !hasPrep {
		return timeHit{}, false
	}
	var from, to time.Time
	switch {
	case d != 0:
		if from, to, ok = p.c.date(y, m, d); !ok {
			return timeHit{}, false
		}
	case y != 0:
		from, to = time.Date(y, m, 1, 0, 0, 0, 0, p.c.loc), time.Date(y, m+1, 1, 0, 0, 0, 0, p.c.loc)
	case kw == "this":
		from, to = time.Date(p.c.y, m, 1, 0, 0, 0, 0, p.c.loc), time.Date(p.c.y, m+1, 1, 0, 0, 0, 0, p.c.loc)
	default:
		from, to = p.c.monthOf(m, kw == "last")
	}
	return timeHit{j, from, to}, true
}

// enYear reads "in|during|throughout|from|of 2023" (or a bare year after
// "since").
func (p *timeParser) enYear(i int, prep bool) (timeHit, bool) {
	j, _, ok := p.t.oneOf(i, "in", "during", "throughout", "from", "of")
	if !ok && !prep {
		return timeHit{}, false
	}
	y, j, ok := p.year(j)
	if !ok {
		return timeHit{}, false
	}
	return timeHit{j, time.Date(y, 1, 1, 0, 0, 0, 0, p.c.loc), time.Date(y+1, 1, 1, 0, 0, 0, 0, p.c.loc)}, true
}

// numericStart is where a numeric date starting at i begins, after an
// optional "on", "in", "from", "of" or "during".
func (p *timeParser) numericStart(i int) int {
	j, _, ok := p.t.oneOf(i, "on", "in", "from", "of", "during")
	if !ok {
		j = i
	}
	return p.t.skip(j)
}

// iso reads "[on|in|from|of|during] 2026-04-30" (or with slashes or dots),
// and "2026-04" for a month.
func (p *timeParser) iso(i int) (timeHit, bool) {
	t := p.t
	y, j, ok := t.digits(p.numericStart(i), 4, 4)
	if !ok || !t.isoSeparatorAt(j) {
		return timeHit{}, false
	}
	sep := t.R[j]
	m, j, ok := t.digits(j+1, 1, 2)
	if !ok || m < 1 || m > 12 {
		return timeHit{}, false
	}
	d := 0
	if j < len(t.R) && t.R[j] == sep {
		if d, j, ok = t.digits(j+1, 1, 2); !ok {
			return timeHit{}, false
		}
	}
	if d != 0 && j+1 < len(t.R) && t.R[j] == 't' && isASCIIDigit(t.R[j+1]) {
		// A time of day goes with the date ("2026-04-30T10:00:00Z"); the
		// range stays the whole day.
		for j++; j < len(t.R) && (isASCIIDigit(t.R[j]) || strings.ContainsRune(":.z+-", t.R[j])); j++ {
		}
		for t.R[j-1] == '.' { // a full stop ending the sentence is not the time's
			j--
		}
	}
	if j < len(t.R) && qnorm.IsSpacedWord(t.R[j]) || t.isoSeparatorAt(j) {
		return timeHit{}, false
	}
	if d == 0 {
		return timeHit{j, time.Date(y, time.Month(m), 1, 0, 0, 0, 0, p.c.loc), time.Date(y, time.Month(m)+1, 1, 0, 0, 0, 0, p.c.loc)}, true
	}
	from, to, ok := p.c.date(y, time.Month(m), d)
	return timeHit{j, from, to}, ok
}

// yearLast reads the numeric dates that end with the year:
// "[on|in|from|of|during] 24.01.2024" (or 24-01-2024, day first, as those
// separators are written where the day comes first) and "1/24/2024" (month
// first, as slashes are written in the United States, unless the first
// number cannot be a month: "24/1/2024" is the 24th).
func (p *timeParser) yearLast(i int) (timeHit, bool) {
	t := p.t
	a, j, ok := t.digits(p.numericStart(i), 1, 2)
	if !ok || !t.isoSeparatorAt(j) {
		return timeHit{}, false
	}
	sep := t.R[j]
	b, j, ok := t.digits(j+1, 1, 2)
	if !ok || j >= len(t.R) || t.R[j] != sep {
		return timeHit{}, false
	}
	y, j, ok := t.digits(j+1, 4, 4)
	if !ok || y < 1900 || y > 2199 || j < len(t.R) && qnorm.IsSpacedWord(t.R[j]) || t.isoSeparatorAt(j) {
		return timeHit{}, false
	}
	d, m := a, b
	if sep == '/' && a <= 12 {
		d, m = b, a
	}
	if m < 1 || m > 12 {
		return timeHit{}, false
	}
	from, to, ok := p.c.date(y, time.Month(m), d)
	return timeHit{j, from, to}, ok
}

// enSince reads "since X" for any other expression X.
func (p *timeParser) enSince(i int) (timeHit, bool) {
	j, ok := p.t.word(i, "since")
	if !ok || p.t.skip(j) >= len(p.t.R) {
		return timeHit{}, false
	}
	h, ok := p.parseAt(p.t.skip(j), true, false)
	if !ok {
		return timeHit{}, false
	}
	return timeHit{h.end, h.from, p.c.day(1)}, true
}

// literals is a list of words to find at a position, compiled to runes
// once; where one is a prefix of another, the longer comes first.
type literals [][]rune

func lits(ss ...string) literals {
	out := make(literals, len(ss))
	for i, s := range ss {
		out[i] = []rune(s)
	}
	return out
}

var (
	halfMonthUnits  = lits("个月", "個月", "ヶ月", "か月", "カ月", "月")
	agoSuffixes     = lits("之前", "以前", "前")
	rollingPrefixes = lits("过去", "過去", "最近", "近", "这", "這", "ここ", "この")
	rollingSuffixes = lits("以内", "之内", "以來", "以来", "内", "里", "裡", "来", "來", "間", "间")
	sincePrefixes   = lits("自从", "自從", "从", "從", "自")
	sinceSuffixes   = lits("以来", "以來", "以降", "から", "开始", "開始", "至今")
	cjkParticles    = lits("には", "では", "の", "に", "は", "で", "的")
)

// CJK units of "N units ago" and "the last N units", longest first.
var cjkUnits = func() []struct {
	w    []rune
	unit int
} {
	src := []struct {
		s    string
		unit int
	}{
		{"个星期", unitWeek}, {"個星期", unitWeek}, {"个礼拜", unitWeek}, {"個禮拜", unitWeek},
		{"ヶ月間", unitMonth}, {"か月間", unitMonth}, {"カ月間", unitMonth}, {"ヵ月間", unitMonth}, {"ケ月間", unitMonth},
		{"个月", unitMonth}, {"個月", unitMonth}, {"ヶ月", unitMonth}, {"ヵ月", unitMonth}, {"か月", unitMonth},
		{"カ月", unitMonth}, {"ケ月", unitMonth}, {"箇月", unitMonth},
		{"星期", unitWeek}, {"礼拜", unitWeek}, {"禮拜", unitWeek}, {"週間", unitWeek}, {"日間", unitDay}, {"年間", unitYear},
		{"天", unitDay}, {"日", unitDay}, {"周", unitWeek}, {"週", unitWeek}, {"年", unitYear},
	}
	out := make([]struct {
		w    []rune
		unit int
	}, len(src))
	for i, s := range src {
		out[i].w, out[i].unit = []rune(s.s), s.unit
	}
	return out
}()

// cjkCountUnit reads a count and a unit: "三天", "2週間", "两个月", "几天",
// "半个月", "半年".
func (p *timeParser) cjkCountUnit(i int) (unit, n, end int, vague, ok bool) {
	t := p.t
	if t.R[i] == '半' {
		if k := t.lit(i+1, halfMonthUnits); k > 0 {
			return unitHalfMonth, 1, i + 1 + k, false, true
		}
		if t.runeIn(i+1, "年") {
			return unitMonth, 6, i + 2, false, true
		}
		return 0, 0, 0, false, false
	}
	n, j, vague, ok := t.cjkNumber(i, false)
	if !ok {
		return 0, 0, 0, false, false
	}
	for _, u := range cjkUnits {
		if t.hasRunes(j, u.w) {
			return u.unit, n, j + len(u.w), vague, true
		}
	}
	return 0, 0, 0, false, false
}

// cjkAgo reads "三天前", "2週間前", "两个月之前", "数年前".
func (p *timeParser) cjkAgo(i int) (timeHit, bool) {
	unit, n, j, vague, ok := p.cjkCountUnit(i)
	if !ok {
		return timeHit{}, false
	}
	k := p.t.lit(j, agoSuffixes)
	if k == 0 {
		return timeHit{}, false
	}
	from, to, ok := p.c.ago(unit, n, vague)
	return timeHit{j + k, from, to}, ok
}

// cjkRolling reads "过去三天", "最近两周", "近3个月", "ここ数日", "過去3年間".
func (p *timeParser) cjkRolling(i int) (timeHit, bool) {
	t := p.t
	k := t.lit(i, rollingPrefixes)
	if k == 0 {
		return timeHit{}, false
	}
	j := i + k
	if t.runeIn(j, "的") {
		j++
	}
	if j >= len(t.R) {
		return timeHit{}, false
	}
	unit, n, j, _, ok := p.cjkCountUnit(j)
	if !ok || t.runeIn(j, "前") {
		return timeHit{}, false
	}
	j += t.lit(j, rollingSuffixes)
	from, to, ok := p.c.lastN(unit, n)
	return timeHit{j, from, to}, ok
}

// cjkYears are the relative years that may precede a month: "去年3月".
var cjkYears = []struct {
	w   []rune
	off int
}{{[]rune("一昨年"), -2}, {[]rune("去年"), -1}, {[]rune("昨年"), -1}, {[]rune("今年"), 0}, {[]rune("本年"), 0},
	{[]rune("明年"), 1}, {[]rune("来年"), 1}}

// cjkDate reads "[2025年|去年|今年][の|的]4月[30日|号]" and "2023年".
func (p *timeParser) cjkDate(i int) (timeHit, bool) {
	t := p.t
	j, y, digitYear, relYear := i, 0, false, false
	if n, e, ok := t.digits(i, 4, 4); ok && t.runeIn(e, "年") {
		j, y, digitYear = e+1, n, true
	} else {
		for _, cy := range cjkYears {
			if t.hasRunes(i, cy.w) {
				j, y, relYear = i+len(cy.w), p.c.y+cy.off, true
				break
			}
		}
	}
	if (digitYear || relYear) && t.runeIn(j, "の的") && j+1 < len(t.R) && (isASCIIDigit(t.R[j+1]) || isKanjiNumeral(t.R[j+1])) {
		j++
	}
	m, e, _, ok := t.cjkNumber(j, true)
	if !ok || m < 1 || m > 12 || !t.runeIn(e, "月") || t.runeIn(e+1, "前間间後后") {
		// A year alone; a relative one ("去年") is cjkFixed's. Not 2023年前
		// (before 2023), 2020年代 (the 2020s) or 2023年度 (a fiscal year).
		if !digitYear || y < 1900 || y > 2199 || t.runeIn(j, "前代度") {
			return timeHit{}, false
		}
		return timeHit{j, time.Date(y, 1, 1, 0, 0, 0, 0, p.c.loc), time.Date(y+1, 1, 1, 0, 0, 0, 0, p.c.loc)}, true
	}
	j = e + 1
	if t.runeIn(j, "份") {
		j++
	}
	if d, e, _, ok := t.cjkNumber(j, true); ok && t.runeIn(e, "日号號") {
		from, to, ok := p.c.date(y, time.Month(m), d)
		return timeHit{e + 1, from, to}, ok
	}
	if digitYear || relYear {
		return timeHit{j, time.Date(y, time.Month(m), 1, 0, 0, 0, 0, p.c.loc), time.Date(y, time.Month(m)+1, 1, 0, 0, 0, 0, p.c.loc)}, true
	}
	from, to := p.c.monthOf(time.Month(m), false)
	return timeHit{j, from, to}, true
}

// cjkSince turns h, an expression found at i, into "since" when a suffix
// follows it ("4月以来", "先週から", "上周开始"), and reads the prefixed form
// "[自从|从|自]X以来" when a prefix starts at i.
func (p *timeParser) cjkSince(i int, h timeHit) (timeHit, bool) {
	t := p.t
	if h.end > 0 {
		if k := t.lit(h.end, sinceSuffixes); k > 0 {
			return timeHit{h.end + k, h.from, p.c.day(1)}, true
		}
	}
	k := t.lit(i, sincePrefixes)
	if k == 0 || i+k >= len(t.R) {
		return timeHit{}, false
	}
	inner, ok := p.parseAt(i+k, true, false)
	if !ok {
		return timeHit{}, false
	}
	if k := t.lit(inner.end, sinceSuffixes); k > 0 {
		return timeHit{inner.end + k, inner.from, p.c.day(1)}, true
	}
	return timeHit{}, false
}

// --- scanning helpers on the normalised query ---

// canStart reports whether an expression may start at rune i: at the start
// of a word, at any CJK character, or at a number not inside a longer one.
func (t *text) canStart(i int) bool {
	r := t.R[i]
	switch {
	case r == ' ':
		return false
	case isKanjiNumeral(r):
		return i == 0 || !isKanjiNumeral(t.R[i-1]) && !isASCIIDigit(t.R[i-1])
	case qnorm.IsCJK(r):
		return true
	case qnorm.IsSpacedWord(r):
		return i == 0 || !qnorm.IsSpacedWord(t.R[i-1])
	}
	return false
}

func (t *text) skip(i int) int {
	for i < len(t.R) && t.R[i] == ' ' {
		i++
	}
	return i
}

// word matches w, lower-case words separated by single spaces, as whole
// words at i (after any space) and returns the index after it.
func (t *text) word(i int, w string) (int, bool) {
	i = t.skip(i)
	if i > 0 && i < len(t.R) && qnorm.IsSpacedWord(t.R[i-1]) {
		return 0, false
	}
	for _, r := range w {
		if i >= len(t.R) || t.R[i] != r {
			return 0, false
		}
		i++
	}
	if i < len(t.R) && qnorm.IsSpacedWord(t.R[i]) {
		return 0, false
	}
	return i, true
}

// oneOf is word for the first of ws that matches.
func (t *text) oneOf(i int, ws ...string) (end int, w string, ok bool) {
	for _, w := range ws {
		if e, ok := t.word(i, w); ok {
			return e, w, true
		}
	}
	return i, "", false
}

// wordAt returns the spaced-script word at i (after any space) and its
// span. The word is lower-case ASCII in a buffer the next call reuses (so
// that map look-ups with it do not allocate), and nil for any other word.
func (t *text) wordAt(i int) (w []byte, start, end int) {
	i = t.skip(i)
	if i > 0 && i < len(t.R) && qnorm.IsSpacedWord(t.R[i-1]) {
		return nil, i, i
	}
	j := i
	for j < len(t.R) && qnorm.IsSpacedWord(t.R[j]) {
		j++
	}
	if j-i > len(t.key) {
		return nil, i, j
	}
	for k, r := range t.R[i:j] {
		if r >= 0x80 {
			return nil, i, j
		}
		t.key[k] = byte(r)
	}
	return t.key[:j-i], i, j
}

// prevWord returns the spaced-script word that ends before i, past spaces.
func (t *text) prevWord(i int) string {
	j := i
	for j > 0 && t.R[j-1] == ' ' {
		j--
	}
	k := j
	for k > 0 && qnorm.IsSpacedWord(t.R[k-1]) {
		k--
	}
	return string(t.R[k:j])
}

// hasRunes reports whether w is at i, exactly.
func (t *text) hasRunes(i int, w []rune) bool {
	return i+len(w) <= len(t.R) && slices.Equal(t.R[i:i+len(w)], w)
}

// lit returns the length in runes of the first of ws found at i, or 0.
func (t *text) lit(i int, ws literals) int {
	for _, w := range ws {
		if t.hasRunes(i, w) {
			return len(w)
		}
	}
	return 0
}

// runeIn reports whether the rune at i is one of set's.
func (t *text) runeIn(i int, set string) bool {
	return i < len(t.R) && strings.ContainsRune(set, t.R[i])
}

// digits reads min to max ASCII digits at i that are not part of a longer
// run of digits.
func (t *text) digits(i, min, max int) (n, end int, ok bool) {
	if i > 0 && i <= len(t.R) && isASCIIDigit(t.R[i-1]) {
		return 0, 0, false
	}
	j := i
	for j < len(t.R) && isASCIIDigit(t.R[j]) {
		if j-i == max {
			return 0, 0, false
		}
		n = n*10 + int(t.R[j]-'0')
		j++
	}
	if j-i < min {
		return 0, 0, false
	}
	return n, j, true
}

func (t *text) isoSeparatorAt(i int) bool {
	return i+1 < len(t.R) && (t.R[i] == '-' || t.R[i] == '/' || t.R[i] == '.') && isASCIIDigit(t.R[i+1])
}

// cjkNumber reads a number in ASCII digits or Chinese numerals up to 99
// ("三", "十二", "二十一", "两"); unless strict (for dates), the vague 几
// and 数 read as 3.
func (t *text) cjkNumber(i int, strict bool) (n, end int, vague, ok bool) {
	if i >= len(t.R) {
		return 0, 0, false, false
	}
	if n, e, ok := t.digits(i, 1, 5); ok {
		return n, e, false, true
	}
	if i > 0 && (isKanjiNumeral(t.R[i-1]) || isASCIIDigit(t.R[i-1])) {
		return 0, 0, false, false
	}
	switch t.R[i] {
	case '几', '幾', '数', '數':
		return 3, i + 1, true, !strict
	case '两', '兩':
		return 2, i + 1, false, !strict
	}
	total, cur, j := 0, -1, i
	for ; j < len(t.R); j++ {
		r := t.R[j]
		if r == '十' {
			if total != 0 {
				return 0, 0, false, false
			}
			total, cur = 10*max(cur, 1), -1
			continue
		}
		d := kanjiDigit(r)
		if d < 0 {
			break
		}
		if cur >= 0 {
			return 0, 0, false, false // "二三": not a number this reads
		}
		cur = d
	}
	if j == i || j < len(t.R) && isKanjiNumeral(t.R[j]) {
		return 0, 0, false, false
	}
	return total + max(cur, 0), j, false, true
}

func kanjiDigit(r rune) int {
	switch r {
	case '〇', '零':
		return 0
	case '一':
		return 1
	case '二':
		return 2
	case '三':
		return 3
	case '四':
		return 4
	case '五':
		return 5
	case '六':
		return 6
	case '七':
		return 7
	case '八':
		return 8
	case '九':
		return 9
	}
	return -1
}

func isKanjiNumeral(r rune) bool {
	return kanjiDigit(r) >= 0 || r == '十' || r == '百' || r == '千' || r == '万' || r == '萬' || r == '两' || r == '兩'
}

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }

// absorbPreposition extends an English expression at i back over a
// preposition that only ties it to the sentence ("notes from last week"),
// so that the rest does not end on a dangling "from".
func (t *text) absorbPreposition(i int) int {
	if w := t.prevWord(i); w != "" {
		switch w {
		case "during", "from", "over", "for", "of", "in", "on":
			j := i
			for j > 0 && t.R[j-1] == ' ' {
				j--
			}
			return j - len([]rune(w))
		}
	}
	return i
}

// cjkParticle extends a CJK expression ending at i over the particle that
// ties it to the sentence ("先週の会議", "上周的会议", "今日は").
func (t *text) cjkParticle(i int) int {
	return i + t.lit(i, cjkParticles)
}
