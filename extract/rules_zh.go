package extract

// Chinese patterns' helpers and relations.

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engram-dev/engram"
)

// zhRule makes a Chinese rule; its text is the subject and the clause. check, if
// set, vets the submatches.
func zhRule(typ string, hint []string, expr string, check func(m []string) bool) rule {
	return rule{typ: typ, zh: true, hint: hint, re: regexp.MustCompile(expr),
		build: func(_ string, m []string) (string, string, bool) {
			if check != nil && !check(m) {
				return "", "", false
			}
			why := ""
			if typ == engram.MemoryDecision {
				why = zhRationale(m[0])
			}
			return m[0], why, true
		}}
}

var (
	zhBecauseSo  = regexp.MustCompile(`(?:因为|由于)(.+?)[，,]?\s*所以`)
	zhBecause    = regexp.MustCompile(`[，,]\s*(?:因为|由于)(.+)$`)
	zhDecideVerb = regexp.MustCompile(`用|选|采用|使用|决定|改用|换成|换用`)
	zhVagueObj   = regexp.MustCompile(`^(?:你|他|她|它|这个|那个|这样|那样|是|说|不|没)`)
)

func zhRationale(s string) string {
	if m := zhBecauseSo.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	if m := zhBecause.FindStringSubmatch(s); m != nil {
		return strings.TrimRight(strings.TrimSpace(m[1]), "，,。 ")
	}
	return ""
}

var (
	zhUseStart  = regexp.MustCompile(`^(?:还是|就|先|要|继续)?(?:改用|换成|换用|采用|使用|选用|选择|选|用)`)
	zhUseAny    = regexp.MustCompile(`改用|换成|换用|采用|使用|选用|选择|选|用`)
	zhPurpose   = regexp.MustCompile(`^(?:用来做|用来|用于|来做|来作|作为|当作|做|作|当|来)`)
	zhToolEnd   = regexp.MustCompile(`用来|用于|来做|来作|作为|当作|做|作|当|来|吧|了|，|,|。|；|因为|由于`)
	zhObjEnd    = regexp.MustCompile(`[，,。；;！!（(]|因为|由于|但是|所以|而且|并且|然后|不过`)
	zhMeasure   = regexp.MustCompile(`^(?:一名|一个|一位|一款|一种|个|名|位)`)
	zhWorkStop  = wordSet("家 家里 这里 那里 这儿 那儿 公司 外地 国外 本地")
	zhJobs      = wordSet("医生 护士 会计 经理 记者 作家 教授 司机 销售 主管 总监 创始人 厨子 警察 军人 演员 歌手 画家 编辑 翻译 导演 秘书 农民 工人")
	zhIs        = wordSet("学生 大学生 研究生 博士生 中学生 小学生 素食者 素食主义者 新手 夜猫子")
	zhNotJob    = wordSet("会员 成员 队员 大师")
	zhHabitSkip = regexp.MustCompile(`^(?:们|想|打算|准备|计划|希望|觉得|认为|要|需要|得)`)
)

// zhFavouriteKeys and zhPurposeKeys give Chinese nouns the English key the
// English rules derive, so both languages meet in the graph.
var (
	zhFavouriteKeys = map[string]string{"书": "book", "电影": "movie", "颜色": "color", "食物": "food", "菜": "food",
		"歌": "song", "歌曲": "song", "歌手": "singer", "乐队": "band", "运动": "sport", "编程语言": "programming_language",
		"语言": "language", "城市": "city", "水果": "fruit", "饮料": "drink", "游戏": "game", "作家": "author",
		"编辑器": "editor", "动物": "animal", "季节": "season", "电视剧": "tv_show", "国家": "country"}
	zhPurposeKeys = map[string]string{"存储": "storage", "缓存": "caching", "数据库": "database", "消息队列": "message_queue",
		"队列": "queue", "前端": "frontend", "后端": "backend", "监控": "monitoring", "日志": "logging", "部署": "deployment",
		"搜索": "search", "认证": "auth", "网关": "gateway", "测试": "testing"}
)

// zhObj cuts a Chinese object before a following clause and its final
// particles.
func zhObj(s string) string {
	if loc := zhObjEnd.FindStringIndex(s); loc != nil {
		s = s[:loc[0]]
	}
	s = strings.TrimSpace(strings.TrimRight(s, relTrim))
	if utf8.RuneCountInString(s) > maxZhObject {
		return ""
	}
	return s
}

// zhKey is the English key of a Chinese noun from keys, else the noun
// itself when short; "" otherwise.
func zhKey(s string, keys map[string]string) string {
	s = strings.TrimSpace(s)
	if k, ok := keys[s]; ok {
		return k
	}
	if s == "" || utf8.RuneCountInString(s) > maxZhRunes || strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		return ""
	}
	return strings.ToLower(s)
}

// zhUseRel reads "用SQLite做存储" (from the verb on when anchored, else from
// the first verb) as (subj, uses_for_storage, SQLite).
func zhUseRel(subj, s string, anchored bool) *engram.Relation {
	s = strings.TrimSpace(s)
	var rest string
	if anchored {
		loc := zhUseStart.FindStringIndex(s)
		if loc == nil {
			return nil
		}
		rest = s[loc[1]:]
	} else {
		loc := zhUseAny.FindStringIndex(s)
		if loc == nil {
			return nil
		}
		rest = s[loc[1]:]
	}
	rest = strings.TrimSpace(rest)
	var tool string
	if r, _ := utf8.DecodeRuneInString(rest); r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		n := strings.IndexFunc(rest, func(r rune) bool {
			return r >= utf8.RuneSelf || !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune(" ._+#-/", r))
		})
		if n < 0 {
			n = len(rest)
		}
		tool = strings.TrimSpace(rest[:n])
	} else {
		n := len(rest)
		if loc := zhToolEnd.FindStringIndex(rest); loc != nil {
			n = loc[0]
		}
		tool = rest[:n]
		if strings.HasPrefix(tool, "一") || strings.HasPrefix(tool, "哪") || utf8.RuneCountInString(tool) > maxZhRunes {
			return nil
		}
	}
	if tool == "" {
		return nil
	}
	pred := "uses"
	after := strings.TrimSpace(rest[len(tool):])
	if loc := zhPurpose.FindStringIndex(after); loc != nil {
		if k := zhKey(zhObj(after[loc[1]:]), zhPurposeKeys); k != "" {
			pred = "uses_for_" + k
		}
	}
	return newRel(subj, pred, tool)
}

func zhNameRel(who, pred, s string) *engram.Relation {
	x := zhObj(s)
	if strings.HasPrefix(x, "了") || utf8.RuneCountInString(x) > 10 {
		return nil
	}
	return newRel(who, pred, x)
}

func zhWorkRel(who, s string) *engram.Relation {
	x := zhObj(s)
	if zhWorkStop[x] {
		return nil
	}
	return newRel(who, "works_at", x)
}

// zhIdentityRel: "一名数据工程师" is works_as, "素食者" is "is".
func zhIdentityRel(who, s string) *engram.Relation {
	x := zhMeasure.ReplaceAllString(zhObj(s), "")
	switch {
	case zhIs[x]:
		return newRel(who, "is", x)
	case zhNotJob[x] || strings.HasSuffix(x, "会员") || strings.HasSuffix(x, "成员"):
		return nil
	case zhJobs[x], strings.HasSuffix(x, "师"), strings.HasSuffix(x, "员"), strings.HasSuffix(x, "经理"):
		if utf8.RuneCountInString(x) > maxZhRunes {
			return nil
		}
		return newRel(who, "works_as", x)
	}
	return nil
}

var zhKin = map[string]kin{"妹妹": enKin["sister"], "姐姐": enKin["sister"], "哥哥": enKin["brother"], "弟弟": enKin["brother"],
	"妻子": enKin["wife"], "老婆": enKin["wife"], "丈夫": enKin["husband"], "老公": enKin["husband"], "朋友": enKin["friend"],
	"女朋友": enKin["girlfriend"], "男朋友": enKin["boyfriend"], "儿子": enKin["son"], "女儿": enKin["daughter"],
	"妈妈": enKin["mother"], "母亲": enKin["mother"], "爸爸": enKin["father"], "父亲": enKin["father"],
	"同事": enKin["colleague"], "老板": enKin["boss"]}

// zhKinRel is kinRel for "我妹妹叫小红" and "我妹妹住在上海".
func zhKinRel(subj string, m []string) *engram.Relation {
	k := zhKin[m[1]]
	rest := strings.TrimPrefix(m[2], "的")
	for _, p := range []string{"叫", "名字是", "名字叫"} {
		if x, ok := strings.CutPrefix(rest, p); ok {
			return zhNameRel(subj, k.pred, x)
		}
	}
	who := subj + "'s " + k.noun
	if x, ok := strings.CutPrefix(rest, "住在"); ok {
		return newRel(who, "lives_in", zhObj(x))
	}
	if x, ok := strings.CutPrefix(rest, "来自"); ok {
		return newRel(who, "is_from", zhObj(x))
	}
	if x, ok := strings.CutPrefix(rest, "是"); ok {
		return zhIdentityRel(who, x)
	}
	if x, ok := strings.CutPrefix(rest, "在"); ok {
		for _, w := range []string{"工作", "上班"} {
			if i := strings.Index(x, w); i > 0 {
				return zhWorkRel(who, x[:i])
			}
		}
	}
	return nil
}

const zhHabitPeriods = `每天|每周|每晚|每个?星期[一二三四五六日天]?|每个?周末|每个?月|每年`

func zhHabitOK(m []string) bool {
	x := strings.TrimSpace(m[3])
	return x != "" && !zhVagueObj.MatchString(x) && !zhHabitSkip.MatchString(x)
}

// zhHabitRel: the activity, with its period when it is "every ...".
func zhHabitRel(subj string, m []string) *engram.Relation {
	x := zhObj(m[3])
	if x == "" {
		return nil
	}
	if strings.HasPrefix(m[1], "每") {
		x = m[1] + m[2] + x
	}
	return newRel(subj, "habit", x)
}
