"""What an utterance says as a request to act now: its clauses, what it excepts, and whether it is one at all.

A sensitive command (``sensitive_commands``) is asked for only by a plain request, so this reading errs on the
side of "not a request": a negation anywhere ("别让烤箱开着", "don't ever unlock"), a question ("门锁开着吗",
"is the garage open?"; "can you …?" is a request), a narration, a report of what is going on ("烤炉在预热"), the
speaker's own plan ("I'll unlock it in a minute") or a condition ("我刚才开了后门", "open the garage when I get
home", "燃气阀打开的时候提醒我"), talk about a device rather than to it (a lock's log,
password, battery; how long the oven has been on), media ("放一首《后门开着》", "play Open the Garage Door")
and idioms ("开门见山", "心里的锁", "step on the gas") ask for nothing sensitive; the user can say it
plainly. A request is read one clause at a time ("打开客厅的灯，前门门锁电量低" asks nothing of the lock), and
what it excepts ("除了前门门锁", "everything but the back door") is set apart. Which door or lock a clause means
is ``door_words``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .category_words import normalised
from .letting_in import PERSON_IN_HERE, open_up_for_whoever_waits

# Idioms and other senses that say a verb and a device word and ask for nothing ("开门见山": to come straight to
# the point; "走后门": to pull strings; "unlock my potential")
IDIOMS = re.compile(r"开门见山|开门红|开门大吉|开门揖盗|关门大吉|闭门造车|门可罗雀|走后门|解锁新|解锁成就|开绿灯|"
                    r"开天窗|开小差|开夜车|开眼界|打开心扉|打开话匣子|打开思路|打开局面|(?<!打)开车(?![库棚门位])|开门迎客|"
                    r"\bopen (?:question|mind|house|source|up to|secret|book)|\bgarage sale|\bdoor to door|"
                    r"\bopen the door to\b(?! (?:the|my|our|your|a|an|his|her)\b)|\bstep on the gas|\boven mitt|"
                    r"\bunlock (?:my|your|our|the) (?:potential|phone|screen|achievement|account|level)")
# a thing named after a supply is no supply: "the gas locker", "a water bottle" are read as one word (gaslocker),
# so that "the gas locker door" is still a door of something the home may not have ("the gas bottle" is the gas)
SUPPLY_NAMED = re.compile(r"\b(?:gas|water)\s+(?:lockers?|cages?|bills?|man|engineer|smell|leaks?|masks?|cans?|bowls?|"
                          r"butts?|fountains?|glass(?:es)?|jugs?)\b|\bwater\s+(?:bottles?|cylinders?|canisters?)\b")
# What makes an utterance no request to act now, whatever it names: a negation anywhere ("别让烤箱开着",
# "don't ever unlock"), a question ("门锁开着吗", "is the garage open?"), a narration or a condition ("我刚才开了
# 后门", "my alarm goes off at 6", "open the garage when I get home"). A sensitive command is never asked for
# in one: the user can say it plainly. (别的门 is "the other doors", 别响了 "silence it": no negation.)
NOT_A_REQUEST = re.compile(
    r"(?<![特分区类级告识性差个派离鉴辨])(?:不|别(?!再?[响叫吵鸣的人处])|没|勿|莫|甭|禁止|休想)|"
    r"[吗么嘛](?:[?？。！!,，\s]|$)|是否|是不是|有没有|多少|几度|什么|怎么|为什么|哪|[?？]|"
    r"刚才|刚刚|已经|昨天|前天|上次|之前|以前|曾经|一会|待会|等会|明天|今晚|晚上|以后|如果|要是|假如|的话|记得|"
    r"回家|到家|离家|谁|还是|敢|试试|记录|日志|密码|电量|电池|状态|信息|历史|多久|几次|多长时间|提醒|通知|"
    r"播放|放一首|放首|放一下|来一首|听一下|歌|曲|节目|电影|叫做|名叫|心里|心门|心锁|"
    # "门开了" says what is, "他给我开了门" what was done; "门给我开了" asks it (给我, 帮我 said last: for the speaker)
    r"(?:开|打开|解锁|开锁|撤防|启动)了(?=[^\s，,。.!！?？吧呢啊它])|(?<!给我)(?<!帮我)(?:开|打开|解锁|开锁|撤防|启动)了$|[我你他她]们?(?:开|打开|解锁|开锁|撤防|启动)了它|"
    r"[开关锁亮]着(?:呢|(?=[\s，,。.!！?？]|$))|正在|在(?:预热|加热|运行|工作|烧)|"
    r"\b(?:don'?t|doesn'?t|didn'?t|do not|does not|never|not|no|won'?t|wouldn'?t|shouldn'?t|can'?t|cannot|"
    r"mustn'?t|nobody|nothing|without|avoid|isn'?t|aren'?t|wasn'?t|is|are|was|were|did|does|has|have|had|"
    r"what|why|when|whenever|where|which|who|how|if|unless|already|yesterday|tomorrow|tonight|later|earlier|ago|"
    r"last|used to|remember|remind|went|goes|going|gone|keeps|unlocked|opened|disarmed|preheated|unlatched|"
    # what happens, or happened, to it ("the scarecrow gets set off by the birds", "it beeps every time it opens")
    r"gets|got|every\s+time|each\s+time|"
    r"who|dare|log|heard|saw|noticed|himself|herself|themselves|myself|ourselves|heads up|will need|takes|took|"
    # a time set ahead ("preheat the oven at 7 pm", "on Monday the hatch will need to open")
    r"at\s+\d{1,2}(?::\d\d)?\s*(?:am|pm|a\.m|p\.m|o'?clock)|at\s+(?:noon|midnight)|"
    r"(?:on|this|next)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)|"
    r"history|battery|password|status|how long|remind|notify|play|song|album|movie|show|"
    # what someone did and left so ("he left it open again", "someone left the hob on"): never "the left door"
    r"(?<!the )left\s+(?:it|them|the|this|that|my|his|her|our|their|your|a|an)|"
    # the speaker's own plan ("I'll unlock the cooler in a minute, first switch its light on"), another's
    r"(?:i|we|he|she|they)(?:'ll|\s+will|\s+shall)|in\s+a\s+(?:minute|moment|bit|sec|second|while))\b|"
    # asked of someone else ("ask the drummer to open the roller door", 让小王去把院门打开, 跟我妈说一声)
    r"\b(?:ask|tell)\s+(?!me\b|us\b)(?:[\w']+\s+){1,3}?to\b|(?:让|叫|喊)(?![我你])[\u4e00-\u9fff]{1,4}?(?<![进出过上下回])去|"
    r"(?:跟|告诉)[\u4e00-\u9fff]{1,4}?说|[他她我]们?自己|"
    # "is" and "has" said short: "the drug cabinet's been left open", "the gate's open" ("let's open" asks)
    r"(?<!\blet)['’](?:s|re)\s+(?:been|being|open|opened|unlocked|locked(?!\s+out)|closed|shut|on|off|still|already|left|stuck|"
    r"broken|beeping|ringing|running|going|wide|ajar|[a-z]+ing)\b", re.I)  # "the van's backing up to the door"
# "Can you unlock the door?" is a request: its question mark and "can" are no question
POLITE_QUESTION = re.compile(r"^\s*(?:please\s+)?(?:can|could|would|will)\s+(?:you|u)\b|"
                             r"(?:好吗|行吗|可以吗)[?？]?\s*$", re.I)
# clauses: and a reason said after the request is a clause of its own ("open the gas valve so the fireplace works")
# (a "please" said between two sentences run together ends the first: "open front door plz my uber eats is here")
# (a spaced dash or a colon too: "the cold room - unlock that one too")
# (", the one into the apartment" says which of what the clause before names: no clause of its own)
CLAUSE = re.compile(r"[，,](?!\s*(?:the|that)\s+one\b)|[。.;；!！?？]|\s[-–—]{1,2}\s|:(?=\s)|"
                    r"\b(?:and then|then|and|but|also|so that|so|because|since|cause)\b|"
                    r"(?<=[a-z] )(?:please|plz|pls)\s+(?=(?:my|our|the|i|i'm|im|we|he|she|they|there|it's)\b)|"
                    r"然后|并且|而且|同时|还有|再|因为|所以|不然|否则|好让", re.I)
EXCEPTED = re.compile(r"除了|除去|(?<=[^\s])(?:除外|以外|之外)|不包括|不算|\b(?:except(?: for)?|other than|apart from|"
                      r"besides|but not|excluding|save for|(?<=thing )but|(?<=all )but)\b", re.I)
TITLES = re.compile(r"《[^》]*》|“[^”]*”|\"[^\"]*\"|「[^」]*」")
# a word that points back to a device named in another clause ("let me in the back door, unlock it")
# ("the hand is at the kitchen door, let him in": the door where someone waits)
# "it" as where another thing is ("the light above it", 它上面的灯) points to no device acted on
_BESIDE_IT = r"(?<!above )(?<!over )(?<!by )(?<!beside )(?<!next to )(?<!near )(?<!under )(?<!below )(?<!behind )"
POINTS_BACK = re.compile(rf"它(?!(?:上面|下面|上方|下方|旁边|边上|附近|前面|后面|对面|里面|外面|旁)的?[\u4e00-\u9fff])|"
                         rf"{_BESIDE_IT}\b(?:it|them|that one|this one)\b|\blet\s+{PERSON_IN_HERE}", re.I)


def _one_word(text: str) -> str:
    """Things named after a supply said as one word (``SUPPLY_NAMED``)."""
    return SUPPLY_NAMED.sub(lambda m: m.group(0).replace(" ", ""), text)


@dataclass(frozen=True)
class RequestReading:
    """An utterance (normalised, idioms out) read as a request."""

    text: str  # without what it excepts
    excepted: str  # what it excepts ("" for nothing)
    is_request: bool  # no negation, question, narration or condition anywhere

    @property
    def clauses(self) -> list[str]:
        return [c for c in CLAUSE.split(self.text) if c.strip()]

    @property
    def requests(self) -> list[str]:
        """The clauses that are requests to act now: no negation, question or narration is in the clause, and no
        condition anywhere ("open the garage door, when I get home"). A reason said in another clause takes
        nothing away: "unlock the front door, the plumber is here", "打开前门，不然进不去"."""
        clauses = self.clauses
        if NOT_NOW.search(self.text) or any(CONDITION.search(clause) for clause in clauses):
            return []
        questions = self._questions()
        return [clause for clause in clauses if _is_request(clause) and clause not in questions]

    def _questions(self) -> set[str]:
        """The clauses a question mark ends that are no polite request: "should we put the shutter up?" wonders,
        "can you unlock the door?" asks."""
        out = set()
        for piece in re.findall(r"[^?？]*[?？]", self.text):
            said = [c for c in CLAUSE.split(piece[:-1]) if c.strip()]
            if said and not POLITE_QUESTION.search(said[-1] + piece[-1]) and not _ZH_POLITE.search(said[-1]):
                out.add(said[-1])
        return out


# a condition: what follows it waits for something ("if you can, unlock the door", "等我到家了，打开车库门")
# put off or taken back: nothing is asked now ("等阿姨来了再开门", "open the safe, no, wait, forget it")
# (a time ahead, then 再: "明天早上再开卷闸门" opens it tomorrow, not now)
NOT_NOW = re.compile(r"等[^，,。；;！!？?]{1,12}?再|"
                     r"(?:明天|明早|明晚|后天|待会儿?|等会儿?|一会儿?|过会儿?|晚点|下午|晚上|今晚|下次|以后)"
                     r"[^，,。；;！!？?]{0,6}?再|算了|不用了|"
                     r"\b(?:forget (?:it|that)|never\s?mind|cancel that|scratch that)\b", re.I)
CONDITION = re.compile(r"如果|要是|假如|的话|等我|等到|到时候?|"
                       r"\b(?:if|when|whenever|unless|(?<!at )once|after|before)\b", re.I)  # "at once" is now


_TARGET_STATE = re.compile(r"\b(to|be)\s+(unlock|open|disarm|unlatch)(?:ed)\b", re.I)  # "set it to disarmed"
# "能不能帮我把烤箱开起来", "能帮我开一下门吗": asking whether one can is asking it done (its 不 and 吗 included)
_ZH_POLITE = re.compile(r"^\s*请?(?:能不能|能否|可不可以|可以|能|麻烦)\s*[请你您]?\s*"
                        r"(?=帮|给|把|替|开|关|解|打|锁|预热)")
# a clause that begins with 把, no one before it but the hearer: an order, its closing 了 that of "do it"
_ZH_BA_ORDER = re.compile(r"^\s*(?:请|帮我|帮忙|麻烦你?|快|赶紧|赶快|马上|给我|你)*把")
_ZH_POLITE_END = re.compile(r"(?:吗|么)[?？]?\s*$")


# a clause that says what something or someone does is no order: "unlatch the shop door so it stays open", "so they
# can get in" (what is ordered is said in the clause before)
_THIRD_PERSON_SAYS = re.compile(r"^\s*(?:it|they|he|she)\s+(?!needs\b|wants\b)(?:[a-z]+s|can|could|will|would|"
                                r"should|must|may|might)\b", re.I)


def _is_request(text: str) -> bool:
    if _THIRD_PERSON_SAYS.search(text):
        return False
    polite = _TARGET_STATE.sub(r"\1 \2", POLITE_QUESTION.sub(" ", text)).rstrip("?？ ")
    if _ZH_POLITE.search(polite):
        polite = _ZH_POLITE_END.sub("", _ZH_POLITE.sub("", polite))
    if _ZH_BA_ORDER.match(polite):  # "把蒸箱开了": an order; "我把门开了" says what was done
        polite = re.sub(r"了\s*$", "", polite)
    polite = _GET_GOING.sub(r"start \1", polite)  # "get the oven going" asks: it reports nothing going
    return not NOT_A_REQUEST.search(EXCEPTED.sub(" ", polite))


_GET_GOING = re.compile(r"\bget\s+((?:[\w']+\s+){0,4}?)going\b", re.I)


# a correction: what was said before it is taken back ("preheat... no, just set the oven to 200", "open the main gas,
# actually no, leave it"); "no" that answers or negates ("no one is home", "no, it's fine") is none
_CORRECTION = re.compile(r"(?:^|[,.;!?…]|\.\.\.)\s*(?:actually\s*,?\s*)?(?:no|nah|nope|sorry)\s*[,.!…]+\s*"
                         r"(?=(?:actually|just|rather|instead|make\s+(?:it|that)|i\s+mean|leave|set|turn|open|close|"
                         r"switch|put|lock|unlock)\b)|\b(?:actually|wait)\s*,?\s*no\b\s*[,.!…]*|不对[，,]|不是[，,]",
                         re.I)


def read_request(utterance: str) -> RequestReading:
    """The utterance read as a request (see the module docstring). A title or a quotation ("放一首《后门开着》",
    'the show "Open the Gate"') is a name, not words said to the home, and what a correction takes back is not
    asked."""
    text = open_up_for_whoever_waits(IDIOMS.sub(" ", _one_word(TITLES.sub(" ", normalised(utterance)))))
    corrections = list(_CORRECTION.finditer(text))
    if corrections:
        text = text[corrections[-1].end():]
    rest, excepted = split_excepted(text)
    return RequestReading(rest, excepted, _is_request(text))


def points_back(clause: str) -> bool:
    """Whether the clause says "it" for a device named in another one ("let me in the back door, unlock it")."""
    return bool(POINTS_BACK.search(clause))


def _quantified_but(clause: str) -> re.Match | None:
    """"but" after every one of a kind said: "open every door but the coop door" excepts the coop door."""
    for match in _BUT.finditer(clause):
        if _EVERY.search(clause, 0, match.start()):
            return match
    return None


_BUT = re.compile(r"\bbut\b(?!\s+(?:then|also|first|please|now|just|only)\b)", re.I)
_EVERY = re.compile(r"\b(?:all|every|each|both|everything|everywhere)\b", re.I)


def split_excepted(text: str) -> tuple[str, str]:
    """(the text without what it excepts, what it excepts): "除了前门都锁上" -> ("都锁上", "前门"); "烤箱和燃气阀除外"
    -> ("", "烤箱和燃气阀"); "unlock all the doors except the front door" -> ("unlock all the doors", "the front
    door")."""
    excepted = []
    for clause in re.split(r"[，,。.;；!！?？]", text):
        match = EXCEPTED.search(clause) or _quantified_but(clause)
        if match is None:
            continue
        if match.group(0) in ("除外", "以外", "之外"):  # what precedes it is excepted ("安防以外的设备")
            excepted.append(clause[:match.start()])
            kept = clause[match.end():]
        else:  # what follows it, up to 以外 / 之外 / 都
            rest = clause[match.end():]
            end = re.search(r"以外|之外|都|全", rest)
            cut = end.start() if end else len(rest)
            excepted.append(rest[:cut])
            kept = clause[:match.start()] + rest[cut:]
        text = text.replace(clause, kept, 1)
    return text, " ".join(excepted)
