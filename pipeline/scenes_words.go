package pipeline

import (
	"strings"

	"github.com/engram-dev/engram/internal/textutil"
)

// The words scene segmentation leaves out of topics: Chinese function
// characters and words, English stopwords and small talk.

// sceneStopChars are Chinese function characters; they split runs of Han
// characters before bigrams are taken, so 我们的数据库 yields 数据, 据库.
var sceneStopChars = func() map[rune]bool {
	m := map[rune]bool{}
	for _, r := range "的了吗呢吧啊呀嗯哦哈嘛啦是在我你他她它们這这那就也和与與很还還又把被给給让讓个個么麼着著啥到从從去来來过過想说說看有没沒不一要怎哪" {
		m[r] = true
	}
	return m
}()

// sceneStopBigrams are frequent Chinese words without topic.
var sceneStopBigrams = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`谢谢 謝謝 好的 可以 没有 沒有 什么 什麼 怎么 怎麼 因为 因為 所以 但是 如果 已经 已經
		还是 就是 可能 应该 應該 需要 觉得 覺得 知道 现在 現在 时候 時候 一下 一个 一些 不错 不錯 不过 不過 然后 然後
		其实 其實 真的 有点 有點 一起 这样 這樣 那样 那樣 大家 自己 问题 問題 事情 东西 東西 感觉 感覺 非常 比较 比較`) {
		m[w] = true
	}
	return m
}()

// sceneStopWords are English function words and the small talk that occurs on
// every topic: the core list, then contractions, fillers, vague verbs and
// nouns, and words of time.
var sceneStopWords = textutil.StopwordSet(textutil.EnglishStopwords,
	`ago almost already also although always another anybody anyone anything anyway anyways aren't around ask asked
		away back best better big can't cannot couldn't didn't doesn't don't done either else enough even ever every
		everyone everything first get gets getting give go goes going gone good got great hadn't hasn't haven't he'd
		he'll he's here's how's however i'd i'll i'm i've isn't it's keep kind know known last later least less let
		let's like likely little lot lots made make makes making many may maybe mean might mine much must need needed
		needs never new next nice nope nothing often oh ok okay old one others otherwise perhaps please pretty
		probably put quite rather really right said say says see seem seems seen she'd she'll she's shouldn't since
		somebody someone something sometimes soon sorry still sure take tell thank thanks thx that's there's they'd
		they'll they're they've thing things think though thought today tomorrow took toward try trying two upon us
		use used using via want wanted wants wasn't way we'd we'll we're we've well went weren't what's whatever who's
		within without won't wouldn't yeah yes yep yet you'd you'll you're you've hi hello hey bye lol haha hmm hm ah
		uh um cool awesome fine alright agree agreed true false exactly definitely actually basically literally
		totally absolutely indeed sounds sound look looks looking feel feels felt bit stuff yesterday tonight morning
		day days week weeks month months year years time times minute minutes hour hours three four five six seven
		eight nine ten second also etc ie eg vs got gonna wanna gotta`)
