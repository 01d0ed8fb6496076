package extract

// The patterns of the rules extractor, English and Chinese, in the order
// they are tried.

import (
	"regexp"
	"strings"

	"github.com/engram-dev/engram"
)

// enRule makes an English rule whose text is subject + verb phrase + object,
// where verb(m) gives the verb phrase and obj is the index of the object.
func enRule(typ string, hint []string, expr string, obj int, verb func(m []string) string) rule {
	return rule{typ: typ, hint: hint, re: regexp.MustCompile(`(?i)\b` + expr), obj: obj,
		build: func(subj string, m []string) (string, string, bool) {
			x := object(subj, m[obj])
			why := ""
			if typ == engram.MemoryDecision {
				x, why = because(x)
			}
			if x == "" || vague(x) {
				return "", "", false
			}
			v := verb(m)
			if !strings.HasPrefix(v, "'") {
				v = " " + v
			}
			return subj + v + " " + x, why, true
		}}
}

func imperative(r rule) rule { r.skipFirst = true; return r }

func litVerb(s string) func([]string) string { return func([]string) string { return s } }

func notVague(i int) func(m []string) bool {
	return func(m []string) bool {
		x := strings.TrimSpace(m[i])
		return x != "" && !zhVagueObj.MatchString(x)
	}
}

// extractRules are in priority order: when two match at the same place the first wins
// ("we'll use X" is a decision, not a plan; "I'm a big fan of X" a
// preference, not a role).
var extractRules = []rule{
	// Decisions.
	enRule(engram.MemoryDecision, []string{"decided"}, `(?:we|i)(?: have|'ve)?(?: finally| just| already)? decided (not to|to|on) (.+)`, 2,
		func(m []string) string { return "decided " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			switch strings.ToLower(m[1]) {
			case "to":
				return toolRel(subj, decisionObj(subj, m[2]))
			case "on":
				return useRel(subj, "decided on", decisionObj(subj, m[2]))
			}
			return nil
		}),
	enRule(engram.MemoryDecision, []string{"let"}, `let'?s (go with|use|pick|choose|stick with|switch to|adopt) (.+)`, 2,
		func(m []string) string { return "decided to " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return useRel(subj, m[1], decisionObj(subj, m[2])) }),
	enRule(engram.MemoryDecision, []string{"agreed"}, `(?:we|i)(?: have|'ve)?(?: all)? agreed (on|to|that) (.+)`, 2,
		func(m []string) string { return "agreed " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			if !strings.EqualFold(m[1], "to") {
				return nil
			}
			return toolRel(subj, decisionObj(subj, m[2]))
		}),
	enRule(engram.MemoryDecision, []string{"decision"}, `the (?:final )?decision is(?: that)?:? (to )?(.+)`, 2,
		func(m []string) string {
			if m[1] != "" {
				return "decided to"
			}
			return "decided:"
		}).withRel(
		func(subj string, m []string) *engram.Relation {
			if m[1] == "" {
				return nil
			}
			return toolRel(subj, decisionObj(subj, m[2]))
		}),
	enRule(engram.MemoryDecision, []string{"we", "i"}, `(?:we|i)(?:'ll| will|'re going to| are going to|'m going to| am going to) (use|go with|switch to|adopt|stick with|pick|choose|migrate to|move to) (.+)`, 2,
		func(m []string) string { return "decided to " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return useRel(subj, m[1], decisionObj(subj, m[2])) }),
	enRule(engram.MemoryDecision, []string{"chose", "picked", "settled", "went with", "opted"}, `(?:we|i)(?: have|'ve)? (chose|picked|settled on|went with|opted for) (.+)`, 2,
		func(m []string) string { return strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			x := decisionObj(subj, m[2])
			if rest, ok := cutPrefixFold(x, "to "); ok { // "we chose to use X"
				return toolRel(subj, rest)
			}
			return useRel(subj, m[1], x)
		}),

	// Preferences.
	enRule(engram.MemoryPreference, []string{"favourite", "favorite"}, `my (?:all-time )?(favou?rite .+? (?:is|are)) (.+)`, 2,
		func(m []string) string { return "'s " + strings.ToLower(m[1]) }).withRel(favouriteRel),
	enRule(engram.MemoryPreference, []string{"don't", "do not"}, `i (?:really )?(?:don't|do not) (?:really )?(like|love|enjoy) (.+)`, 2,
		func(m []string) string { return "doesn't " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			if strings.EqualFold(m[1], "love") { // not loving X is no dislike
				return nil
			}
			return tasteRel(subj, "dislikes", object(subj, m[2]))
		}),
	enRule(engram.MemoryPreference, []string{"fan of"}, `i(?:'m| am) (?:a |an )?(?:big |huge |massive )?fan of (.+)`, 1, litVerb("is a fan of")).withRel(
		func(subj string, m []string) *engram.Relation { return tasteRel(subj, "likes", object(subj, m[1])) }),
	enRule(engram.MemoryPreference, []string{"i "}, `i ((?:really |also |much |truly |definitely |absolutely |still )?)(prefer|like|love|hate|enjoy|dislike|adore|can't stand) (.+)`, 3,
		func(m []string) string { return strings.ToLower(m[1]) + third(m[2]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			return tasteRel(subj, tastePredicate[strings.ToLower(m[2])], object(subj, m[3]))
		}),

	// Plans and todos.
	enRule(engram.MemoryPlan, []string{"going to", "planning to"}, `(?:i|we)(?:'m| am|'re| are) (going|planning) to (.+)`, 2,
		func(m []string) string { return "is " + strings.ToLower(m[1]) + " to" }),
	{typ: engram.MemoryPlan, hint: []string{"'ll", "will", "shall"}, re: regexp.MustCompile(`(?i)\b(?:i|we)(?:'ll| will| shall) (.+)`), obj: 1,
		build: func(subj string, m []string) (string, string, bool) {
			x := object(subj, m[1])
			if x == "" || vague(x) || isSmallTalk(x) || strings.HasPrefix(strings.ToLower(x), "be ") && len(strings.Fields(x)) < 3 {
				return "", "", false
			}
			return subj + " will " + x, "", true
		}},
	enRule(engram.MemoryPlan, []string{"plan", "intend", "want", "aim", "mean"}, `(?:i|we) (plan|intend|want|aim|mean) to (.+)`, 2,
		func(m []string) string { return third(m[1]) + " to" }),
	enRule(engram.MemoryPlan, []string{"need", "have to", "must", "should", "got"}, `(?:we|i) (need to|have to|must|should|got to|gotta) (.+)`, 2,
		func(m []string) string { return third(m[1]) }),
	imperative(enRule(engram.MemoryPlan, []string{"todo", "to-do", "to do"}, `(?:todo|to-do|to do)\s*[:\-]\s*(.+)`, 1, litVerb("has a todo:"))),
	enRule(engram.MemoryPlan, []string{"remind me", "forget to", "remember to"}, `(?:remind me to|don't forget to|do not forget to|remember to) (.+)`, 1,
		litVerb("wants to remember to")),

	// Facts about the speaker and their people.
	enRule(engram.MemoryFact, []string{"my name", "call me"}, `(?:my name is|my name's|call me) (.+)`, 1, litVerb("is called")).withRel(
		func(subj string, m []string) *engram.Relation {
			// "Call me Bob", not "call me tomorrow".
			return nameRel(subj, "name", object(subj, m[1]), hasPrefixFold(m[0], "call"))
		}),
	enRule(engram.MemoryFact, []string{"i'm", "i am"}, `i(?:'m| am) (a|an) (.+)`, 2,
		func(m []string) string { return "is " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return identityRel(subj, object(subj, m[2])) }),
	enRule(engram.MemoryFact, []string{"work"}, `i (?:work|am working|'m working) (at|for|in|as) (.+)`, 2,
		func(m []string) string { return "works " + strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation { return workRel(subj, m[1], object(subj, m[2])) }),
	enRule(engram.MemoryFact, []string{"live"}, `i (?:live|am living|'m living) in (.+)`, 1, litVerb("lives in")).withRel(
		func(subj string, m []string) *engram.Relation {
			return newRel(subj, "lives_in", home(object(subj, m[1])))
		}),
	enRule(engram.MemoryFact, []string{"from"}, `i(?:'m| am) (?:originally )?from (.+)`, 1, litVerb("is from")).withRel(
		func(subj string, m []string) *engram.Relation {
			return placeRel(subj, "is_from", object(subj, m[1]), liveCuts)
		}),
	rule{typ: engram.MemoryFact, hint: []string{"my "}, re: regexp.MustCompile(`(?i)\bmy ((?:best |older |younger |little |big )?(?:sister|brother|wife|husband|partner|friend|mom|mum|mother|dad|father|son|daughter|boss|manager|colleague|coworker|girlfriend|boyfriend|cousin|aunt|uncle|grandma|grandmother|grandpa|grandfather|dog|cat)(?:'s)?) (.+)`), obj: 2,
		build: func(subj string, m []string) (string, string, bool) {
			x := object(subj, m[2])
			if x == "" || reportVerb.MatchString(x) {
				return "", "", false
			}
			return subj + "'s " + strings.ToLower(m[1]) + " " + x, "", true
		}}.withRel(kinRel),

	// Past events.
	enRule(engram.MemoryEvent, []string{"went", "visited", "started", "moved", "attended", "joined", "finished", "graduated", "flew", "travel", "met"},
		`(?:i|we) (?:just |finally |recently )?(went to|visited|started|moved to|attended|joined|finished|graduated from|flew to|travelled to|traveled to|met) (.+)`, 2,
		func(m []string) string { return strings.ToLower(m[1]) }).withRel(
		func(subj string, m []string) *engram.Relation {
			// "I moved to Berlin"; "we moved to Postgres" is a migration.
			if !hasPrefixFold(m[0], "i ") || !strings.EqualFold(m[1], "moved to") {
				return nil
			}
			return placeRel(subj, "lives_in", object(subj, m[2]), placeCuts)
		}),

	// Habits: facts with the relation (speaker, habit, activity). After
	// the rules above, and the leading "every morning I ..." form steps
	// aside for their verbs, so a clause they matched keeps its memory.
	{typ: engram.MemoryFact, hint: habitAdverbs, obj: 3,
		re: regexp.MustCompile(`(?i)\bi (` + strings.Join(habitAdverbs, "|") + `) ([a-z']+)\b(.*)`),
		build: func(subj string, m []string) (string, string, bool) {
			return habitText(subj, m[2], m[3], strings.ToLower(m[1]), "", false)
		},
		rel: func(subj string, m []string) *engram.Relation { return habitRel(subj, m[2], m[3], "") }},
	{typ: engram.MemoryFact, hint: []string{"every"}, obj: 3,
		re: regexp.MustCompile(`(?i)\b(every ` + habitPeriods + `)\s*,?\s+i ([a-z']+)\b(.*)`),
		build: func(subj string, m []string) (string, string, bool) {
			return habitText(subj, m[2], m[3], "", strings.ToLower(m[1]), true)
		},
		rel: func(subj string, m []string) *engram.Relation {
			return habitRel(subj, m[2], m[3], strings.ToLower(m[1]))
		}},
	{typ: engram.MemoryFact, hint: []string{"every"}, obj: 2,
		re: regexp.MustCompile(`(?i)\bi ([a-z']+)\b(.*?),?\s+(every ` + habitPeriods + `)\b`),
		build: func(subj string, m []string) (string, string, bool) {
			return habitText(subj, m[1], m[2], "", strings.ToLower(m[3]), false)
		},
		rel: func(subj string, m []string) *engram.Relation {
			return habitRel(subj, m[1], m[2], strings.ToLower(m[3]))
		}},

	// Chinese.
	zhRule(engram.MemoryDecision, nil, `(?:我们|我)(?:最终|最后|已经|一致)?决定(?:了)?(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhUseRel(subj, m[1], true) }),
	zhRule(engram.MemoryDecision, nil, `决定(?:用|使用|采用|选用|选)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			return zhUseRel(subj, strings.TrimPrefix(m[0], "决定"), true)
		}),
	zhRule(engram.MemoryDecision, nil, `就(?:用|选)(.+?)吧`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			return zhUseRel(subj, strings.TrimPrefix(m[0], "就"), true)
		}),
	zhRule(engram.MemoryDecision, nil, `(?:因为|由于)(.+?)[，,]?\s*所以(.+)`, func(m []string) bool { return zhDecideVerb.MatchString(m[2]) }).withRel(
		func(subj string, m []string) *engram.Relation { return zhUseRel(subj, m[2], false) }),
	zhRule(engram.MemoryPreference, nil, `我最喜欢的(.+?)是(.+)`, nil).withRel(
		func(subj string, m []string) *engram.Relation {
			if k := zhKey(m[1], zhFavouriteKeys); k != "" {
				return newRel(subj, "favourite_"+k, zhObj(m[2]))
			}
			return nil
		}),
	zhRule(engram.MemoryPreference, nil, `我(?:真的|也|并|一点也|一直)?不(?:太|怎么)?(?:喜欢|爱)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return newRel(subj, "dislikes", zhObj(m[1])) }),
	zhRule(engram.MemoryPreference, nil, `我(?:更|很|非常|特别|比较|真的|也|最|一直)?(?:喜欢|爱|偏好|讨厌|热爱)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			pred := "likes"
			switch verb := m[0][:len(m[0])-len(m[1])]; {
			case strings.HasSuffix(verb, "讨厌"):
				pred = "dislikes"
			case strings.HasSuffix(verb, "偏好") || strings.HasPrefix(verb, "我更"):
				pred = "prefers"
			}
			return newRel(subj, pred, zhObj(m[1]))
		}),
	zhRule(engram.MemoryPlan, nil, `(?:我们|我)(?:下周|明天|今晚|周末|之后|以后)?(?:打算|准备|计划|想要|要|需要)(.+)`, notVague(1)),
	zhRule(engram.MemoryPlan, nil, `^(?:计划|记得|别忘了|提醒我|待办[:：]?)(.+)`, notVague(1)),
	zhRule(engram.MemoryFact, nil, `我叫(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhNameRel(subj, "name", m[1]) }),
	zhRule(engram.MemoryFact, nil, `我的名字是(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhNameRel(subj, "name", m[1]) }),
	zhRule(engram.MemoryFact, nil, `我在(.+?)(?:工作|上班|任职)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return zhWorkRel(subj, m[1]) }),
	zhRule(engram.MemoryFact, nil, `我住在(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return newRel(subj, "lives_in", zhObj(m[1])) }),
	zhRule(engram.MemoryFact, []string{"来自"}, `我来自(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation { return newRel(subj, "is_from", zhObj(m[1])) }),
	zhRule(engram.MemoryFact, nil, `我的?(妹妹|姐姐|哥哥|弟弟|妻子|老婆|丈夫|老公|朋友|女朋友|男朋友|儿子|女儿|妈妈|爸爸|母亲|父亲|同事|老板)(.+)`,
		func(m []string) bool { return !zhReport.MatchString(m[2]) }).withRel(zhKinRel),
	zhRule(engram.MemoryFact, nil, `我是(.{1,20})$`, func(m []string) bool {
		return !zhVagueObj.MatchString(m[1]) && !strings.HasPrefix(m[1], "在") && !strings.HasPrefix(m[1], "想")
	}).withRel(func(subj string, m []string) *engram.Relation { return zhIdentityRel(subj, m[1]) }),
	zhRule(engram.MemoryEvent, nil, `(?:我们|我)(?:昨天|上周|上个月|去年|今天|刚)?(?:去了|参加了|搬到了|搬到|开始了|完成了|加入了|见了)(.+)`, notVague(1)).withRel(
		func(subj string, m []string) *engram.Relation {
			// "我搬到了深圳"; "我们搬到了..." is the team's.
			verb := strings.TrimSuffix(m[0][:len(m[0])-len(m[1])], "了")
			if strings.HasPrefix(m[0], "我们") || !strings.HasSuffix(verb, "搬到") {
				return nil
			}
			return newRel(subj, "lives_in", zhObj(m[1]))
		}),
	// Habits, as in English: "我每天跑步", "每天早上我都跑步".
	zhRule(engram.MemoryFact, []string{"每", "通常", "经常", "一般", "总是", "常常", "平时", "平常", "往往"},
		`我(`+zhHabitPeriods+`|平时|平常|通常|经常|一般|总是|常常|往往)(早上|早晨|上午|中午|下午|晚上)?(?:都会|都|会|也)?(.+)`, zhHabitOK).withRel(zhHabitRel),
	zhRule(engram.MemoryFact, []string{"每"},
		`(`+zhHabitPeriods+`)(早上|早晨|上午|中午|下午|晚上)?我(?:都会|都|会|也)?(.+)`, zhHabitOK).withRel(zhHabitRel),
}

var (
	reportVerb = regexp.MustCompile(`(?i)^(?:said|says|told|tells|asked|asks|thinks|thought|believes|claims|wrote)\b`)
	zhReport   = regexp.MustCompile(`^(?:说|觉得|认为|告诉|问)`)
)
