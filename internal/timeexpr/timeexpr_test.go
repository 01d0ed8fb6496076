package timeexpr_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/timeexpr"
)

// timeAsOf is a Sunday afternoon, the clock all the tables below read.
var timeAsOf = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// at parses "2006-01-02" or "2006-01-02T15:04" in UTC.
func at(tb testing.TB, s string) time.Time {
	tb.Helper()
	layout := time.DateOnly
	if strings.Contains(s, "T") {
		layout = "2006-01-02T15:04"
	}
	t, err := time.ParseInLocation(layout, s, time.UTC)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

type timeCase struct {
	query, from, to, expr, rest string
}

func checkTimeCases(t *testing.T, asOf time.Time, tests []timeCase) {
	t.Helper()
	for _, tt := range tests {
		r, rest, ok := timeexpr.Parse(tt.query, asOf)
		from, to := at(t, tt.from), at(t, tt.to)
		if !ok || !r.From.Equal(from) || !r.To.Equal(to) || r.Expr != tt.expr || rest != tt.rest {
			t.Errorf("ParseTimeExpr(%q) = [%s, %s) %q, rest %q, %v;\n\twant [%s, %s) %q, rest %q",
				tt.query, r.From.Format(time.DateTime), r.To.Format(time.DateTime), r.Expr, rest, ok,
				from.Format(time.DateTime), to.Format(time.DateTime), tt.expr, tt.rest)
		}
	}
}

func TestTimeExprAsOfIsSunday(t *testing.T) {
	if timeAsOf.Weekday() != time.Sunday {
		t.Fatalf("the tables assume asOf is a Sunday, it is a %s", timeAsOf.Weekday())
	}
}

func TestTimeExprEnglish(t *testing.T) {
	checkTimeCases(t, timeAsOf, []timeCase{
		// Days.
		{"what did we decide today", "2026-11-29", "2026-11-30", "today", "what did we decide"},
		{"What did we decide yesterday?", "2026-11-28", "2026-11-29", "yesterday", "What did we decide?"},
		{"Yesterday, what did we decide?", "2026-11-28", "2026-11-29", "Yesterday", "what did we decide?"},
		{"what happened the day before yesterday?", "2026-11-27", "2026-11-28", "the day before yesterday", "what happened?"},
		{"day before yesterday", "2026-11-27", "2026-11-28", "day before yesterday", ""},
		{"what did we say this morning", "2026-11-29", "2026-11-30", "this morning", "what did we say"},
		{"earlier today we chose 8080", "2026-11-29", "2026-11-30", "earlier today", "we chose 8080"},
		{"what did we plan last night", "2026-11-28T12:00", "2026-11-29T06:00", "last night", "what did we plan"},
		{"what is on tomorrow", "2026-11-30", "2026-12-01", "on tomorrow", "what is"},
		{"yesterday's meeting notes", "2026-11-28", "2026-11-29", "yesterday", "meeting notes"},
		{"in yesterday’s meeting", "2026-11-28", "2026-11-29", "yesterday", "in meeting"},
		{"TODAY", "2026-11-29", "2026-11-30", "TODAY", ""},
		// Calendar weeks, months, years; weeks start on Monday.
		{"this week", "2026-11-23", "2026-11-30", "this week", ""},
		{"what did we decide last week about the port", "2026-11-16", "2026-11-23", "last week", "what did we decide about the port"},
		{"notes from last week", "2026-11-16", "2026-11-23", "from last week", "notes"},
		{"plans for next week", "2026-11-30", "2026-12-07", "for next week", "plans"},
		{"earlier this week", "2026-11-23", "2026-11-30", "earlier this week", ""},
		{"the week before last", "2026-11-09", "2026-11-16", "the week before last", ""},
		{"this month", "2026-11-01", "2026-12-01", "this month", ""},
		{"last month's outage", "2026-10-01", "2026-11-01", "last month", "outage"},
		{"next month", "2026-12-01", "2027-01-01", "next month", ""},
		{"this year", "2026-01-01", "2027-01-01", "this year", ""},
		{"last year we used MySQL", "2025-01-01", "2026-01-01", "last year", "we used MySQL"},
		{"this weekend", "2026-11-28", "2026-11-30", "this weekend", ""},
		{"last weekend", "2026-11-21", "2026-11-23", "last weekend", ""},
		{"what broke over the weekend", "2026-11-28", "2026-11-30", "over the weekend", "what broke"},
		// N units ago: a day, or a window centred on the day N units back.
		{"3 days ago", "2026-11-26", "2026-11-27", "3 days ago", ""},
		{"three days ago", "2026-11-26", "2026-11-27", "three days ago", ""},
		{"a day ago", "2026-11-28", "2026-11-29", "a day ago", ""},
		{"twelve days ago", "2026-11-17", "2026-11-18", "twelve days ago", ""},
		{"a couple of days ago", "2026-11-26", "2026-11-29", "a couple of days ago", ""},
		{"a few days ago", "2026-11-25", "2026-11-28", "a few days ago", ""},
		{"a week ago", "2026-11-19", "2026-11-26", "a week ago", ""},
		{"two weeks ago", "2026-11-12", "2026-11-19", "two weeks ago", ""},
		{"a month ago", "2026-10-14", "2026-11-14", "a month ago", ""},
		{"three months ago", "2026-08-14", "2026-09-14", "three months ago", ""},
		{"what did we say 3 months ago about Kafka", "2026-08-14", "2026-09-14", "3 months ago", "what did we say about Kafka"},
		{"a year ago", "2025-05-29", "2026-05-29", "a year ago", ""},
		{"2 years ago", "2024-05-29", "2025-05-29", "2 years ago", ""},
		// The last N units: from N units back through today.
		{"in the last 3 days", "2026-11-26", "2026-11-30", "in the last 3 days", ""},
		{"what did we change in the last two weeks?", "2026-11-15", "2026-11-30", "in the last two weeks", "what did we change?"},
		{"over the past month", "2026-10-29", "2026-11-30", "over the past month", ""},
		{"in the last week", "2026-11-22", "2026-11-30", "in the last week", ""},
		{"the past week", "2026-11-22", "2026-11-30", "the past week", ""},
		{"this past week", "2026-11-22", "2026-11-30", "this past week", ""},
		{"last 6 months", "2026-05-29", "2026-11-30", "last 6 months", ""},
		{"the last few days", "2026-11-26", "2026-11-30", "the last few days", ""},
		{"within the past year", "2025-11-29", "2026-11-30", "within the past year", ""},
		{"recently", "2026-10-30", "2026-11-30", "recently", ""},
		{"what did we decide lately?", "2026-10-30", "2026-11-30", "lately", "what did we decide?"},
		// Dates without a year: the most recent on or before asOf.
		{"on April 30", "2026-04-30", "2026-05-01", "on April 30", ""},
		{"what did we decide on April 30?", "2026-04-30", "2026-05-01", "on April 30", "what did we decide?"},
		{"April 30", "2026-04-30", "2026-05-01", "April 30", ""},
		{"april 30th", "2026-04-30", "2026-05-01", "april 30th", ""},
		{"Apr. 30", "2026-04-30", "2026-05-01", "Apr. 30", ""},
		{"30 April", "2026-04-30", "2026-05-01", "30 April", ""},
		{"on the 30th of April", "2026-04-30", "2026-05-01", "on the 30th of April", ""},
		{"December 25", "2025-12-25", "2025-12-26", "December 25", ""},
		{"Nov 29", "2026-11-29", "2026-11-30", "Nov 29", ""},
		{"Nov 30", "2025-11-30", "2025-12-01", "Nov 30", ""},
		{"Feb 29", "2024-02-29", "2024-03-01", "Feb 29", ""},
		{"May 5", "2026-05-05", "2026-05-06", "May 5", ""},
		{"on may 5", "2026-05-05", "2026-05-06", "on may 5", ""},
		{"the 5th of may", "2026-05-05", "2026-05-06", "the 5th of may", ""},
		// With a year.
		{"on April 30, 2025", "2025-04-30", "2025-05-01", "on April 30, 2025", ""},
		{"April 30 2025", "2025-04-30", "2025-05-01", "April 30 2025", ""},
		{"30 April 2025", "2025-04-30", "2025-05-01", "30 April 2025", ""},
		{"On April 30, we chose 8080", "2026-04-30", "2026-05-01", "On April 30", "we chose 8080"},
		// Months and years.
		{"in March", "2026-03-01", "2026-04-01", "in March", ""},
		{"what did we decide in March about hiring", "2026-03-01", "2026-04-01", "in March", "what did we decide about hiring"},
		{"in march", "2026-03-01", "2026-04-01", "in march", ""},
		{"in may", "2026-05-01", "2026-06-01", "in may", ""},
		{"in November", "2026-11-01", "2026-12-01", "in November", ""},
		{"in December", "2025-12-01", "2026-01-01", "in December", ""},
		{"last March", "2026-03-01", "2026-04-01", "last March", ""},
		{"last November", "2025-11-01", "2025-12-01", "last November", ""},
		{"this December", "2026-12-01", "2027-01-01", "this December", ""},
		{"in March 2024", "2024-03-01", "2024-04-01", "in March 2024", ""},
		{"May 2024", "2024-05-01", "2024-06-01", "May 2024", ""},
		{"during Sept 2025", "2025-09-01", "2025-10-01", "during Sept 2025", ""},
		{"in 2023", "2023-01-01", "2024-01-01", "in 2023", ""},
		{"what did we ship in 2023?", "2023-01-01", "2024-01-01", "in 2023", "what did we ship?"},
		// Weekdays: the most recent before today.
		{"last Monday", "2026-11-23", "2026-11-24", "last Monday", ""},
		{"on Monday", "2026-11-23", "2026-11-24", "on Monday", ""},
		{"what did we say on monday about the port", "2026-11-23", "2026-11-24", "on monday", "what did we say about the port"},
		{"on Saturday", "2026-11-28", "2026-11-29", "on Saturday", ""},
		{"on Sunday", "2026-11-22", "2026-11-23", "on Sunday", ""},
		{"on last Friday", "2026-11-27", "2026-11-28", "on last Friday", ""},
		{"this past Tuesday", "2026-11-24", "2026-11-25", "this past Tuesday", ""},
		{"this Monday", "2026-11-23", "2026-11-24", "this Monday", ""},
		{"next Monday", "2026-11-30", "2026-12-01", "next Monday", ""},
		// Since: from the start of X through today.
		{"since April", "2026-04-01", "2026-11-30", "since April", ""},
		{"since may", "2026-05-01", "2026-11-30", "since may", ""},
		{"since last week", "2026-11-16", "2026-11-30", "since last week", ""},
		{"since Monday", "2026-11-23", "2026-11-30", "since Monday", ""},
		{"since 2025", "2025-01-01", "2026-11-30", "since 2025", ""},
		{"since April 30", "2026-04-30", "2026-11-30", "since April 30", ""},
		{"since 2026-10-01", "2026-10-01", "2026-11-30", "since 2026-10-01", ""},
		// ISO dates.
		{"2026-04-30", "2026-04-30", "2026-05-01", "2026-04-30", ""},
		{"what happened on 2026-04-30?", "2026-04-30", "2026-05-01", "on 2026-04-30", "what happened?"},
		{"2025/12/01 deploy", "2025-12-01", "2025-12-02", "2025/12/01", "deploy"},
		{"2026-04-30T10:00:00Z", "2026-04-30", "2026-05-01", "2026-04-30T10:00:00Z", ""},
		{"in 2026-04", "2026-04-01", "2026-05-01", "in 2026-04", ""},
		{"２０２６－０４－３０", "2026-04-30", "2026-05-01", "２０２６－０４－３０", ""},
		// Numeric dates ending with the year: day first with dots or dashes,
		// month first with slashes unless the first number is no month.
		{"what did Paola cook on 22.01.2024?", "2024-01-22", "2024-01-23", "on 22.01.2024", "what did Paola cook?"},
		{"02.01.2024", "2024-01-02", "2024-01-03", "02.01.2024", ""},
		{"on 30-04-2026", "2026-04-30", "2026-05-01", "on 30-04-2026", ""},
		{"on 4/30/2026 we shipped", "2026-04-30", "2026-05-01", "on 4/30/2026", "we shipped"},
		{"on 1/2/2026", "2026-01-02", "2026-01-03", "on 1/2/2026", ""},
		{"30/4/2026", "2026-04-30", "2026-05-01", "30/4/2026", ""},
		// The first expression wins.
		{"last week or yesterday", "2026-11-16", "2026-11-23", "last week", "or yesterday"},
	})
}

func TestTimeExprChinese(t *testing.T) {
	checkTimeCases(t, timeAsOf, []timeCase{
		{"今天我们决定了什么", "2026-11-29", "2026-11-30", "今天", "我们决定了什么"},
		{"昨天我们决定了什么", "2026-11-28", "2026-11-29", "昨天", "我们决定了什么"},
		{"我们昨天决定了什么？", "2026-11-28", "2026-11-29", "昨天", "我们决定了什么？"},
		{"前天", "2026-11-27", "2026-11-28", "前天", ""},
		{"昨晚", "2026-11-28T12:00", "2026-11-29T06:00", "昨晚", ""},
		{"上周的会议上我们决定了什么", "2026-11-16", "2026-11-23", "上周", "会议上我们决定了什么"},
		{"上个星期", "2026-11-16", "2026-11-23", "上个星期", ""},
		{"上星期", "2026-11-16", "2026-11-23", "上星期", ""},
		{"上周一起吃饭的地方", "2026-11-16", "2026-11-23", "上周", "一起吃饭的地方"},
		{"这周", "2026-11-23", "2026-11-30", "这周", ""},
		{"本周", "2026-11-23", "2026-11-30", "本周", ""},
		{"上个月", "2026-10-01", "2026-11-01", "上个月", ""},
		{"上月", "2026-10-01", "2026-11-01", "上月", ""},
		{"本月", "2026-11-01", "2026-12-01", "本月", ""},
		{"这个月", "2026-11-01", "2026-12-01", "这个月", ""},
		{"去年", "2025-01-01", "2026-01-01", "去年", ""},
		{"今年", "2026-01-01", "2027-01-01", "今年", ""},
		{"三天前", "2026-11-26", "2026-11-27", "三天前", ""},
		{"3天前", "2026-11-26", "2026-11-27", "3天前", ""},
		{"十二天前", "2026-11-17", "2026-11-18", "十二天前", ""},
		{"几天前", "2026-11-25", "2026-11-28", "几天前", ""},
		{"两周前", "2026-11-12", "2026-11-19", "两周前", ""},
		{"两个星期之前", "2026-11-12", "2026-11-19", "两个星期之前", ""},
		{"一个月前", "2026-10-14", "2026-11-14", "一个月前", ""},
		{"三个月前我们讨论过", "2026-08-14", "2026-09-14", "三个月前", "我们讨论过"},
		{"半个月前", "2026-11-07", "2026-11-22", "半个月前", ""},
		{"半年前", "2026-05-14", "2026-06-14", "半年前", ""},
		{"十年前", "2016-05-29", "2017-05-29", "十年前", ""},
		{"最近", "2026-10-30", "2026-11-30", "最近", ""},
		{"最近我们讨论了什么", "2026-10-30", "2026-11-30", "最近", "我们讨论了什么"},
		{"最近三天", "2026-11-26", "2026-11-30", "最近三天", ""},
		{"过去两周里", "2026-11-15", "2026-11-30", "过去两周里", ""},
		{"4月30日", "2026-04-30", "2026-05-01", "4月30日", ""},
		{"4月30号我们决定了什么", "2026-04-30", "2026-05-01", "4月30号", "我们决定了什么"},
		{"四月三十日", "2026-04-30", "2026-05-01", "四月三十日", ""},
		{"2025年4月30日", "2025-04-30", "2025-05-01", "2025年4月30日", ""},
		{"三月", "2026-03-01", "2026-04-01", "三月", ""},
		{"3月份的预算", "2026-03-01", "2026-04-01", "3月份", "预算"},
		{"十二月", "2025-12-01", "2026-01-01", "十二月", ""},
		{"2023年", "2023-01-01", "2024-01-01", "2023年", ""},
		{"2024年3月", "2024-03-01", "2024-04-01", "2024年3月", ""},
		{"去年3月", "2025-03-01", "2025-04-01", "去年3月", ""},
		{"从上周开始", "2026-11-16", "2026-11-30", "从上周开始", ""},
		{"4月以来的决定", "2026-04-01", "2026-11-30", "4月以来", "决定"},
		{"上周末", "2026-11-21", "2026-11-23", "上周末", ""},
	})
}

func TestTimeExprJapanese(t *testing.T) {
	checkTimeCases(t, timeAsOf, []timeCase{
		{"今日", "2026-11-29", "2026-11-30", "今日", ""},
		{"今日は何を決めた？", "2026-11-29", "2026-11-30", "今日", "何を決めた？"},
		{"昨日", "2026-11-28", "2026-11-29", "昨日", ""},
		{"一昨日", "2026-11-27", "2026-11-28", "一昨日", ""},
		{"先週の会議で何を決めた？", "2026-11-16", "2026-11-23", "先週", "会議で何を決めた？"},
		{"先週、何を決めた？", "2026-11-16", "2026-11-23", "先週", "何を決めた？"},
		{"今週", "2026-11-23", "2026-11-30", "今週", ""},
		{"先月", "2026-10-01", "2026-11-01", "先月", ""},
		{"今月", "2026-11-01", "2026-12-01", "今月", ""},
		{"去年", "2025-01-01", "2026-01-01", "去年", ""},
		{"昨年", "2025-01-01", "2026-01-01", "昨年", ""},
		{"今年", "2026-01-01", "2027-01-01", "今年", ""},
		{"3日前", "2026-11-26", "2026-11-27", "3日前", ""},
		{"三日前", "2026-11-26", "2026-11-27", "三日前", ""},
		{"数日前", "2026-11-25", "2026-11-28", "数日前", ""},
		{"2週間前", "2026-11-12", "2026-11-19", "2週間前", ""},
		{"3ヶ月前", "2026-08-14", "2026-09-14", "3ヶ月前", ""},
		{"3か月前", "2026-08-14", "2026-09-14", "3か月前", ""},
		{"３カ月前", "2026-08-14", "2026-09-14", "３カ月前", ""},
		{"5年前", "2021-05-29", "2022-05-29", "5年前", ""},
		{"最近", "2026-10-30", "2026-11-30", "最近", ""},
		{"ここ3日間", "2026-11-26", "2026-11-30", "ここ3日間", ""},
		{"4月30日", "2026-04-30", "2026-05-01", "4月30日", ""},
		{"2025年4月30日", "2025-04-30", "2025-05-01", "2025年4月30日", ""},
		{"3月", "2026-03-01", "2026-04-01", "3月", ""},
		{"3月に決めたこと", "2026-03-01", "2026-04-01", "3月", "決めたこと"},
		{"2023年", "2023-01-01", "2024-01-01", "2023年", ""},
		{"今年の3月", "2026-03-01", "2026-04-01", "今年の3月", ""},
		{"先週から", "2026-11-16", "2026-11-30", "先週から", ""},
		{"先週末", "2026-11-21", "2026-11-23", "先週末", ""},
	})
}

// The brief's anchors: a date without a year looks back from asOf.
func TestTimeExprLooksBack(t *testing.T) {
	march1 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	checkTimeCases(t, march1, []timeCase{
		{"April 30", "2025-04-30", "2025-05-01", "April 30", ""},
		{"4月30日", "2025-04-30", "2025-05-01", "4月30日", ""},
		{"in March", "2026-03-01", "2026-04-01", "in March", ""},
		{"last March", "2025-03-01", "2025-04-01", "last March", ""},
		{"on Sunday", "2026-02-22", "2026-02-23", "on Sunday", ""}, // 1 March 2026 is a Sunday
		{"a month ago", "2026-01-17", "2026-02-17", "a month ago", ""},
	})
	// Month arithmetic clamps: 31 May minus three months is 28 February.
	may31 := time.Date(2026, 5, 31, 12, 0, 0, 0, time.UTC)
	checkTimeCases(t, may31, []timeCase{
		{"three months ago", "2026-02-13", "2026-03-16", "three months ago", ""},
		{"in the last 3 months", "2026-02-28", "2026-06-01", "in the last 3 months", ""},
	})
	// The brief's example: three months before 29 November includes 29 August.
	r, _, ok := timeexpr.Parse("three months ago", timeAsOf)
	if aug29 := at(t, "2026-08-29"); !ok || aug29.Before(r.From) || !aug29.Before(r.To) {
		t.Errorf("three months ago = [%s, %s), want it to hold 2026-08-29", r.From, r.To)
	}
}

// Calendar arithmetic is done in asOf's location: days are local days,
// 25 hours long on the night summer time ends.
func TestTimeExprLocation(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	asOf := time.Date(2026, 11, 2, 1, 30, 0, 0, ny) // summer time ended on 1 November
	r, _, ok := timeexpr.Parse("yesterday", asOf)
	if !ok || !r.From.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, ny)) || !r.To.Equal(time.Date(2026, 11, 2, 0, 0, 0, 0, ny)) || r.To.Sub(r.From) != 25*time.Hour {
		t.Errorf("yesterday = [%s, %s), want 1 November local, 25 hours", r.From, r.To)
	}
	// 01:30 on 2 November in New York is already 2 November; in UTC it is 06:30.
	r, _, _ = timeexpr.Parse("today", asOf)
	if r.From.Location() != ny || r.From.Day() != 2 {
		t.Errorf("today = %s, want 2 November in New York", r.From)
	}
}

// timeNegatives hold no temporal expression, though some hold words that
// can name one in another sentence.
var timeNegatives = []string{
	"we may use Redis",
	"we march on",
	"we march 30 miles",
	"May I ask what we decided?",
	"5 may be enough",
	"Mar the surface",
	"march forward with the plan",
	"the august committee",
	"our April release",
	"April said she would deploy",
	"June will review it",
	"the second option",
	"wait a second",
	"I need a date for the release",
	"we chose Postgres",
	"the last month of the year was busy",
	"at last we shipped",
	"last time we met",
	"the past is the past",
	"past tense",
	"I have 2023 rows",
	"the 2023 roadmap",
	"version 2.0.1",
	"call me at 10:30",
	"the Monday meeting",
	"Sunday school",
	"two weeks of work",
	"a few more days",
	"todays",
	"yesterdays",
	"nowadays",
	"one day we will",
	"in a day or two",
	"the year is long",
	"week-long sprint",
	"monthly report",
	"a 30 day trial",
	"the 1st place",
	"in 20 minutes",
	"port 8080",
	"12/31",
	"in 99",
	"13/13/2024",
	"31.02.2024",
	"1.5.2024x",
	"",
	// Chinese.
	"我记得这个",
	"我们决定用Postgres",
	"这个问题很难",
	"周报写完了",
	"月亮很圆",
	"年轻人",
	"天气很好",
	"每天都开会",
	"三个人",
	"数据库",
	"两个方案",
	"十分重要",
	"上面的代码",
	"前端",
	// Japanese.
	"覚える",
	"日本語",
	"月曜会議",
	"年末調整",
	"数学",
	"一日中",
	"三日月",
	"毎日",
	"月末",
	"2020年代",
	"2023年度",
}

func TestTimeExprNegatives(t *testing.T) {
	for _, q := range timeNegatives {
		if r, rest, ok := timeexpr.Parse(q, timeAsOf); ok || rest != q {
			t.Errorf("ParseTimeExpr(%q) = [%s, %s) %q, rest %q; want nothing", q, r.From, r.To, r.Expr, rest)
		}
	}
}

// A TimeRange converts to the API's engram.TimeRange as is.
func TestTimeExprConvertsToEngram(t *testing.T) {
	r, _, _ := timeexpr.Parse("yesterday", timeAsOf)
	if e := engram.TimeRange(r); e.Expr != "yesterday" {
		t.Fatal(e)
	}
}

func FuzzParseTimeExpr(f *testing.F) {
	for _, q := range timeNegatives {
		f.Add(q)
	}
	for _, q := range []string{"since last week", "on April 30, 2025", "三个月前", "2025年4月30日", "ここ3日間", "從上週開始",
		"yesterday's", "2026-04-30T10:00", "since since since", "99999 days ago", "in the last 99999999 years", "二十一天前", "十十天前"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		r, rest, ok := timeexpr.Parse(q, timeAsOf)
		if !ok {
			if rest != q || r != (timeexpr.Range{}) {
				t.Fatalf("no match but %v, %q", r, rest)
			}
			return
		}
		if !r.From.Before(r.To) {
			t.Fatalf("ParseTimeExpr(%q): empty range [%s, %s)", q, r.From, r.To)
		}
		if r.Expr == "" || !strings.Contains(q, r.Expr) {
			t.Fatalf("ParseTimeExpr(%q): expr %q is not in the query", q, r.Expr)
		}
		if len(rest) >= len(q) {
			t.Fatalf("ParseTimeExpr(%q) removed nothing: %q", q, rest)
		}
		if utf8.ValidString(q) && !utf8.ValidString(rest) {
			t.Fatalf("ParseTimeExpr(%q) cut a rune: %q", q, rest)
		}
	})
}

func BenchmarkParseTimeExpr(b *testing.B) {
	// A 4 KB query with no expression: every position is tried.
	q := strings.Repeat("we decided to march on with 8080 数据库的端口 覚えるのは大事 ", 200)[:engram.MaxQueryBytes]
	for !utf8.ValidString(q) {
		q = q[:len(q)-1]
	}
	b.SetBytes(int64(len(q)))
	for b.Loop() {
		if _, _, ok := timeexpr.Parse(q, timeAsOf); ok {
			b.Fatal("matched")
		}
	}
}

func TestTimeSuffix(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Next week ", "Next week"},
		{"Next week, ", "Next week"},
		{"on Monday ", "on Monday"},
		{"So tomorrow ", "tomorrow"},
		{"In March, ", "In March"},
		{"3 days ago ", "3 days ago"},
		{"Last week was hard, but ", ""},
		{"We met last week and ", ""},
		{"nextweek ", ""},
		{"", ""},
	} {
		got, ok := timeexpr.Suffix(c.in, timeAsOf)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("TimeSuffix(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}
