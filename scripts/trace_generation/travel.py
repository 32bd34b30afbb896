"""Families about trips and places: timetable-lookup, city-distance, weather-history (synthetic observations)
and timezone-conversion."""

from __future__ import annotations

import math
from datetime import date, timedelta

from .common import WEEKDAYS, fmt, longdate, pick, qy, st, tr

# ----------------------------------------------------------------------------------------------------------------
# train / flight timetable lookup
# ----------------------------------------------------------------------------------------------------------------
ROUTES = [
    # origin, destination, operator, duration (min), first dep (min after midnight), interval, time-zone shift (h)
    ("Zürich HB", "Milano Centrale", "SBB/Trenitalia EuroCity", 197, 6 * 60 + 33, 120, 0),
    ("Paris Gare de Lyon", "Lyon Part-Dieu", "SNCF TGV INOUI", 117, 6 * 60 + 4, 60, 0),
    ("Tokyo", "Kyoto", "JR Central Nozomi", 135, 6 * 60, 20, 0),
    ("London King's Cross", "Edinburgh Waverley", "LNER", 260, 6 * 60 + 30, 60, 0),
    ("Amsterdam Centraal", "Berlin Hbf", "NS/DB InterCity", 370, 6 * 60 + 4, 120, 0),
    ("Madrid Puerta de Atocha", "Barcelona Sants", "Renfe AVE", 150, 6 * 60 + 30, 60, 0),
    ("Wien Hbf", "Budapest-Keleti", "ÖBB Railjet", 160, 6 * 60 + 10, 120, 0),
    ("Frankfurt (Main) Hbf", "München Hbf", "DB ICE", 190, 5 * 60 + 50, 60, 0),
    ("New York Penn Station", "Washington Union Station", "Amtrak Acela", 175, 5 * 60 + 30, 60, 0),
    ("Beijing South", "Shanghai Hongqiao", "China Railway G-train", 268, 7 * 60, 30, 0),
    ("Helsinki (HEL)", "Stockholm Arlanda (ARN)", "Finnair", 60, 7 * 60 + 25, 150, -1),
]


def hm(m: int) -> str:
    return f"{(m // 60) % 24:02d}:{m % 60:02d}"


def fam_timetable(rng):
    good, bad, queries = [], [], []
    for i, (orig, dest, op, dur, first, step, tz) in enumerate(ROUTES):
        d = date(2024, 1, 8) + timedelta(days=rng.randint(0, 300))
        sunday = i % 4 == 3
        if sunday:
            while d.weekday() != 6:
                d += timedelta(days=1)
        elif d.weekday() >= 5:
            d -= timedelta(days=2)
        start = first + (90 if sunday else 0)
        deps = []
        m = start
        while m < 21 * 60:
            direct = rng.random() > 0.25
            deps.append((m, m + dur + (0 if direct else rng.choice([25, 40])) + tz * 60, direct))
            m += step + rng.choice([0, 0, 5, -5])
        kind = ["arrive_by", "first_after", "count"][i % 3]
        shown = [x for x in deps if x[0] < 12 * 60 + 30] or deps[:8]
        listing = "; ".join(f"{hm(a)} -> {hm(b)}{'' if dr else ' (1 change)'}" for a, b, dr in shown)
        flight = orig.endswith(")")
        mode = "flight" if flight else "train"
        if kind == "arrive_by":
            target = deps[min(len(deps) - 1, 4)][1] + rng.choice([5, 15, 20])
            ok = [x for x in deps if x[2] and x[1] <= target]
            best = ok[-1]
            q = pick(rng, [f"I need to be in {dest} by {hm(target)} on {WEEKDAYS[d.weekday()]} {d.isoformat()}. "
                           f"What's the latest direct {mode} from {orig} I can take?",
                           f"Which is the last direct {op} {mode} from {orig} that still gets to {dest} before "
                           f"{hm(target)} on {longdate(d)}?"])
            ans = f"The {hm(best[0])} departure, arriving {hm(best[1])} (local time)"
            code = f"[d for d in deps if d.direct and d.arr <= '{hm(target)}'][-1]"
            obs = f"({hm(best[0])}, {hm(best[1])}, direct)"
        elif kind == "first_after":
            t0 = deps[2][0] + rng.choice([3, 10, 20])
            nxt = next(x for x in deps if x[0] >= t0 and x[2])
            q = pick(rng, [f"What's the first direct {mode} from {orig} to {dest} after {hm(t0)} on {d.isoformat()}, "
                           "and how long does it take?",
                           f"On {longdate(d)}, when does the next direct {op} service leave {orig} for {dest} after "
                           f"{hm(t0)}, and when does it arrive?"])
            travel = nxt[1] - nxt[0] - tz * 60
            ans = (f"{hm(nxt[0])} from {orig}, arriving {hm(nxt[1])} local time ({travel // 60} h {travel % 60:02d} "
                   "min)")
            code = f"next(d for d in deps if d.dep >= '{hm(t0)}' and d.direct)"
            obs = f"({hm(nxt[0])}, {hm(nxt[1])}, direct), duration {travel} min"
        else:
            lo, hi = 8 * 60, 12 * 60
            n = sum(1 for x in deps if lo <= x[0] < hi and x[2])
            q = f"How many direct {mode}s are there from {orig} to {dest} between 08:00 and 12:00 on {d.isoformat()}?"
            ans = f"{n} direct departures between 08:00 and 12:00"
            code = "sum(1 for d in deps if '08:00' <= d.dep < '12:00' and d.direct)"
            obs = str(n)
        steps = [st("Find the operator's journey planner for the exact date (timetables differ by weekday).",
                    "web_search", f"{op} timetable {orig} to {dest} {d.isoformat()}",
                    f"Official journey planner of {op} found; {'Sunday' if sunday else 'weekday'} timetable applies."),
                 st("List all departures for that date, including whether they are direct.", "browse_webpage",
                    f"journey planner: {orig} -> {dest}, {d.isoformat()}, from 05:00",
                    f"Departures -> arrivals{' (arrival times local, 1 h behind)' if tz else ''}: {listing}"),
                 st("Filter in code so the arrival/departure and direct-only conditions are applied exactly.",
                    "python", code, obs)]
        if kind == "arrive_by":
            steps.append(st("Check the margin: a delay on a tight connection would make the traveller late.",
                            "calculator", f"{hm(target)} - {hm(best[1])}", f"{target - best[1]} min"))
        reas = ("Used the operator's planner for the specific date, because Sunday and holiday timetables start "
                "later and have fewer direct services. The conditions were applied in code: direct services only, "
                "and for 'be there by' questions the constraint is on arrival, not departure." +
                (" Arrival times are in the destination's time zone (one hour behind), so the duration was computed "
                 "after correcting for the offset." if tz else ""))
        good.append(tr(q, f"look up a {mode} timetable", steps, reas, ans))
    bad.append(tr("What's the latest direct train from Paris Gare de Lyon that gets to Lyon Part-Dieu by 12:00 on "
                  "Sunday 14 April 2024?", "look up a train timetable",
                  [st("Search timetable.", "web_search", "TGV Paris Lyon timetable",
                      "Weekday timetable: 09:04, 10:04 -> 12:01, 11:04"),
                   st("Pick a train departing before 12:00 minus two hours.", "calculator", "12:00 - 1:57", "10:03")],
                  "Subtracted the journey time from the deadline and chose the nearest departure.",
                  "The 10:04 departure"))
    queries.append(qy("Which KTX leaves Seoul latest but still gets me into Busan before 14:30 on Friday 7 June "
                      "2024? Direct only.", "find a train that arrives before a deadline"))
    queries.append(qy("eurostar brussels -> london on sunday 22 sept 2024, first one after 10am? what time does "
                      "it get in (london time)?", "next departure and arrival time across time zones"))
    queries.append(qy("2024年5月15日上午9点以后，哥本哈根到汉堡的第一班直达火车是几点？几点到？", "查询火车时刻表",
                      lang="zh"))
    queries.append(qy("Can you check this for me?", "timetable question", images=1, caption_only=True,
                      caption="Screenshot of a chat: 'How many direct Frecciarossa trains go from Milano Centrale "
                              "to Roma Termini between 7 and 10 in the morning on Tuesday 9 July 2024?'"))
    queries.append(qy("Osaka to Hiroshima by shinkansen on 3 March 2024: what's the last Nozomi I can catch to "
                      "arrive before 19:00?", "latest train meeting an arrival deadline"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# distance between cities
# ----------------------------------------------------------------------------------------------------------------
CITIES = {"Paris": (48.8566, 2.3522), "Lyon": (45.7640, 4.8357), "Marseille": (43.2965, 5.3698),
          "Berlin": (52.5200, 13.4050), "Munich": (48.1351, 11.5820), "Hamburg": (53.5511, 9.9937),
          "Madrid": (40.4168, -3.7038), "Barcelona": (41.3874, 2.1686), "Rome": (41.9028, 12.4964),
          "Milan": (45.4642, 9.1900), "Vienna": (48.2082, 16.3738), "Prague": (50.0755, 14.4378),
          "Amsterdam": (52.3676, 4.9041), "Brussels": (50.8503, 4.3517), "London": (51.5074, -0.1278),
          "Edinburgh": (55.9533, -3.1883), "Tokyo": (35.6762, 139.6503), "Osaka": (34.6937, 135.5023),
          "Boston": (42.3601, -71.0589), "New York": (40.7128, -74.0060), "Chicago": (41.8781, -87.6298),
          "Toronto": (43.6532, -79.3832), "Montreal": (45.5017, -73.5673), "Sydney": (-33.8688, 151.2093),
          "Melbourne": (-37.8136, 144.9631), "Lisbon": (38.7223, -9.1393), "Porto": (41.1579, -8.6291)}


def haversine(a: str, b: str) -> float:
    (la1, lo1), (la2, lo2) = CITIES[a], CITIES[b]
    p1, p2 = math.radians(la1), math.radians(la2)
    dp, dl = p2 - p1, math.radians(lo2 - lo1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


def fam_distance(rng):
    good, bad, queries = [], [], []
    pairs = [("Paris", "Lyon"), ("Berlin", "Munich"), ("Madrid", "Barcelona"), ("Rome", "Milan"),
             ("Vienna", "Prague"), ("Amsterdam", "Brussels"), ("London", "Edinburgh"), ("Tokyo", "Osaka"),
             ("Boston", "New York"), ("Toronto", "Montreal"), ("Sydney", "Melbourne")]
    for i, (a, b) in enumerate(pairs):
        gc = haversine(a, b)
        road = gc * rng.uniform(1.15, 1.35)
        hours = road / rng.uniform(78, 92)
        kind = ["crow", "drive", "miles"][i % 3]
        with_img = i % 4 == 3
        steps = [st("Geocode both city centres.", "map_lookup", f"geocode '{a}'; geocode '{b}'",
                    f"{a}: {CITIES[a][0]}, {CITIES[a][1]}; {b}: {CITIES[b][0]}, {CITIES[b][1]}")]
        if with_img:
            steps.insert(0, st("Read the two pinned places on the map screenshot.", "ocr", "image_1 (map)",
                               f"Pins labelled '{a}' and '{b}'"))
        if kind in ("crow", "miles"):
            steps.append(st("Great-circle (haversine) distance, R = 6371 km.", "python",
                            f"haversine(({CITIES[a][0]}, {CITIES[a][1]}), ({CITIES[b][0]}, {CITIES[b][1]}))",
                            f"{fmt(gc, 1)} km"))
            if kind == "miles":
                steps.append(st("Convert to miles.", "unit_converter", f"{fmt(gc, 1)} km -> mi",
                                f"{fmt(gc / 1.609344, 1)} mi"))
                q = pick(rng, [f"How many miles is it from {a} to {b} in a straight line?",
                               f"Straight-line distance between {a} and {b} in miles?"])
                ans = f"About {fmt(gc / 1.609344, 0)} miles ({fmt(gc, 0)} km) as the crow flies"
            else:
                q = pick(rng, [f"How far is {a} from {b} as the crow flies?",
                               f"What's the straight-line distance between {a} and {b} in km?"])
                ans = f"About {fmt(gc, 0)} km (great-circle distance between city centres)"
        else:
            steps.append(st("Driving distance needs a route, not the straight line.", "map_lookup",
                            f"route {a} -> {b}, mode=driving",
                            f"Fastest route: {fmt(road, 0)} km, {int(hours)} h {int(hours % 1 * 60):02d} min"))
            q = pick(rng, [f"How long is the drive from {a} to {b}, and how many kilometres?",
                           f"What's the road distance between {a} and {b} by car, and the driving time?"])
            ans = (f"About {fmt(road, 0)} km by road, roughly {int(hours)} h {int(hours % 1 * 60):02d} min without "
                   f"stops (straight line {fmt(gc, 0)} km)")
        if with_img:
            q = "Using the two pins on this map: " + q[0].lower() + q[1:]
        reas = ("Geocoded both cities to their centres and used the haversine formula for straight-line distance; "
                "for driving questions the routing service was used instead, because road distance is typically "
                "15-35% longer. Units (km vs miles) were converted only at the end.")
        good.append(tr(q, "compute the distance between two cities", steps, reas, ans, images=1 if with_img else 0,
                       caption=f"A map screenshot with pins on {a} and {b}." if with_img else None))
    gc = haversine("Lisbon", "Porto")
    bad.append(tr("How long is the drive from Lisbon to Porto?", "compute the distance between two cities",
                  [st("Geocode.", "map_lookup", "Lisbon; Porto", "38.72,-9.14; 41.16,-8.63"),
                   st("Distance.", "python", "haversine(...)", f"{fmt(gc, 1)} km")],
                  "Computed the distance between the two cities.", f"{fmt(gc, 0)} km, about 3 hours"))
    queries.append(qy("What's the great-circle distance from Hamburg to Munich?", "straight-line distance between "
                      "two cities"))
    queries.append(qy("driving marseille to barcelona, how many km and hours roughly?", "road trip distance and "
                      "time"))
    queries.append(qy("芝加哥到纽约的直线距离是多少公里？合多少英里？", "计算两城市之间的距离", lang="zh"))
    queries.append(qy("How far apart are these?", "distance from a map", images=1, caption_only=True,
                      caption="Map screenshot with two pins labelled 'Bristol' and 'Newcastle'; the user wants the "
                              "straight-line distance in miles."))
    queries.append(qy("I'm planning to drive from Porto down to Lisbon - what distance and time should I expect?",
                      "estimate driving distance and time"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# weather history - all observations are synthetic
# ----------------------------------------------------------------------------------------------------------------
WEATHER_CITIES = [("Oslo", "Oslo-Blindern", -4, 22), ("Madrid", "Madrid-Barajas", 6, 34),
                  ("Chicago", "Chicago O'Hare", -6, 29), ("Tokyo", "Tokyo (JMA)", 5, 32),
                  ("Melbourne", "Melbourne Olympic Park", 10, 30), ("Cairo", "Cairo Intl", 14, 38),
                  ("Vancouver", "Vancouver Intl", 2, 24), ("Mumbai", "Mumbai Santacruz", 24, 34),
                  ("Berlin", "Berlin-Tempelhof", -2, 28), ("Buenos Aires", "Aeroparque", 9, 31),
                  ("Seoul", "Seoul (KMA 108)", -5, 31)]


def fam_weather(rng):
    good, bad, queries = [], [], []
    for i, (city, station, lo, hi) in enumerate(WEATHER_CITIES):
        d = date(2018, 1, 1) + timedelta(days=rng.randint(0, 5 * 365))
        kind = ["max", "rain_week", "snow", "avg"][i % 4]
        days = [d + timedelta(days=k) for k in range(7)]
        peak = 15 if city in ("Melbourne", "Buenos Aires") else 200  # day of year of the warmest weather
        season = lo + (hi - lo) * (0.5 + 0.5 * math.cos(2 * math.pi * (d.timetuple().tm_yday - peak) / 365))
        tmax = [round(season + rng.gauss(0, 1.8), 1) for _ in days]
        wet = {"Cairo": 0.05, "Madrid": 0.5, "Mumbai": 2.0}.get(city, 1.0)
        rain = [round(max(0.0, rng.gauss(1.5, 4)) * wet, 1) for _ in days]
        table = "; ".join(f"{x.isoformat()}: max {t} °C, precip {r} mm" for x, t, r in zip(days, tmax, rain,
                                                                                              strict=True))
        steps = [st("Find a historical weather archive with station data.", "web_search",
                    f"{city} weather history {d.isoformat()}", f"meteostat.net and timeanddate.com archives; "
                    f"station {station}"),
                 st(f"Open the daily records for {station} (the airport/official station, local days).",
                    "browse_webpage", f"meteostat daily data, {station}, {days[0].isoformat()} to "
                    f"{days[-1].isoformat()}", table)]
        if kind == "max":
            q = pick(rng, [f"What was the maximum temperature in {city} on {longdate(d)}?",
                           f"How hot did it get in {city} on {d.isoformat()}?"])
            ans = f"{tmax[0]} °C ({fmt(tmax[0] * 9 / 5 + 32, 1)} °F) at {station}"
        elif kind == "rain_week":
            tot = round(sum(rain), 1)
            steps.append(st("Sum the daily precipitation in code.", "python", f"sum({rain})", fmt(tot, 1)))
            q = f"How much rain fell in {city} in the week starting {longdate(d)}?"
            ans = f"{fmt(tot, 1)} mm over {days[0].isoformat()} - {days[-1].isoformat()} ({station})"
        elif kind == "snow":
            snowed = tmax[0] < 2 and rain[0] > 0
            q = f"Did it snow in {city} on {longdate(d)}?"
            steps.append(st("Check the present-weather codes, not just temperature.", "browse_webpage",
                            f"timeanddate hourly observations {city} {d.isoformat()}",
                            "Observed: light snow 06:00-11:00" if snowed else
                            f"No snow reported; {'rain' if rain[0] else 'dry'}, max {tmax[0]} °C"))
            ans = (f"Yes - light snow in the morning (max {tmax[0]} °C, {rain[0]} mm precipitation)" if snowed else
                   f"No - {'rain' if rain[0] else 'no precipitation'}, max {tmax[0]} °C")
        else:
            avg = round(sum(tmax) / len(tmax), 1)
            steps.append(st("Average the daily maxima.", "python", f"mean({tmax})", fmt(avg, 1)))
            q = pick(rng, [f"What was the average daily high in {city} during the week of {longdate(d)}?",
                           f"Average maximum temperature in {city} for {days[0].isoformat()} to "
                           f"{days[-1].isoformat()}?"])
            ans = f"{fmt(avg, 1)} °C (mean of 7 daily maxima at {station})"
        reas = ("Used station data from a historical archive rather than a forecast site, naming the station "
                "(usually the airport) because city-centre and airport readings differ. Daily values were "
                "aggregated in code, and units were reported in °C with °F or mm where useful.")
        good.append(tr(q, "look up historical weather", steps, reas, ans))
    bad.append(tr("What was the high temperature in Chicago on 3 July 2021?", "look up historical weather",
                  [st("Search.", "web_search", "Chicago weather July 3", "Chicago 10-day forecast: Sat 3 Jul high "
                      "84°F"),
                   st("Convert.", "unit_converter", "84 F -> C", "28.9 C")],
                  "Used the weather page result for that date.", "28.9 °C"))
    queries.append(qy("What was the high in Lisbon on 14 August 2022?", "past daily maximum temperature"))
    queries.append(qy("was it raining in dublin on my wedding day (june 10 2023)? how much?", "historical "
                      "rainfall on a date"))
    queries.append(qy("2021年2月13日北京下雪了吗？当天最高气温是多少？", "查询历史天气", lang="zh"))
    queries.append(qy("Can you look this up?", "weather lookup", images=1, caption_only=True,
                      caption="Photo of an old diary entry 'Sydney, 1 Jan 2020 - so hot!' with the question 'how "
                              "hot was it that day really?'"))
    queries.append(qy("Total precipitation in Paris for the week starting 5 March 2019, please.",
                      "weekly rainfall total"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# time-zone conversion (dates chosen well away from DST switch days)
# ----------------------------------------------------------------------------------------------------------------
TZ = {  # city: (standard offset, DST offset, hemisphere of DST or None, zone name)
    "New York": (-5, -4, "N", "America/New_York"), "Los Angeles": (-8, -7, "N", "America/Los_Angeles"),
    "London": (0, 1, "N", "Europe/London"), "Paris": (1, 2, "N", "Europe/Paris"),
    "Berlin": (1, 2, "N", "Europe/Berlin"), "Tokyo": (9, 9, None, "Asia/Tokyo"),
    "Sydney": (10, 11, "S", "Australia/Sydney"), "Mumbai": (5.5, 5.5, None, "Asia/Kolkata"),
    "Beijing": (8, 8, None, "Asia/Shanghai"), "São Paulo": (-3, -3, None, "America/Sao_Paulo"),
    "Phoenix": (-7, -7, None, "America/Phoenix"), "Kathmandu": (5.75, 5.75, None, "Asia/Kathmandu"),
    "Auckland": (12, 13, "S", "Pacific/Auckland"), "Dubai": (4, 4, None, "Asia/Dubai"),
}


def tz_offset(city: str, d: date) -> float:
    std, dst, hemi, _ = TZ[city]
    if hemi is None:
        return std
    northern_summer = 4 <= d.month <= 9
    return dst if (northern_summer if hemi == "N" else not northern_summer) else std


def _utc(h: float) -> str:
    sign = "+" if h >= 0 else "-"
    h = abs(h)
    return f"UTC{sign}{int(h):02d}:{int(round(h % 1 * 60)):02d}"


def fam_timezone(rng):
    good, bad, queries = [], [], []
    pairs = [("New York", "Sydney"), ("London", "Mumbai"), ("Los Angeles", "Tokyo"), ("Paris", "New York"),
             ("Beijing", "Berlin"), ("Phoenix", "London"), ("Kathmandu", "Paris"), ("Auckland", "Los Angeles"),
             ("Dubai", "São Paulo"), ("Sydney", "London"), ("Tokyo", "Mumbai")]
    for a, b in pairs:
        d = date(2024, pick(rng, [1, 2, 7, 8, 11, 12]), rng.randint(5, 25))
        if d.month == 11 or d.month == 2:
            d = d.replace(month=pick(rng, [1, 7]))
        hh, mm = rng.randint(6, 22), pick(rng, [0, 15, 30, 45])
        oa, ob = tz_offset(a, d), tz_offset(b, d)
        start = hh * 60 + mm
        tgt = start + int(round((ob - oa) * 60))
        day_shift = tgt // (24 * 60)
        tgt %= 24 * 60
        new_d = d + timedelta(days=day_shift)
        q = pick(rng, [f"A call is scheduled for {hh:02d}:{mm:02d} in {a} on {d.isoformat()}. What time is that in "
                       f"{b}?",
                       f"If it's {hh:02d}:{mm:02d} on {longdate(d)} in {a}, what's the local time and date in {b}?",
                       f"Our webinar starts {hh:02d}:{mm:02d} {a} time on {longdate(d)} - when is that for "
                       f"attendees in {b}?"])
        steps = [st("Get both UTC offsets valid on that date (DST differs by hemisphere and country).",
                    "web_search", f"UTC offset {a} {b} {d.isoformat()}",
                    f"{a} ({TZ[a][3]}): {_utc(oa)}; {b} ({TZ[b][3]}): {_utc(ob)} on {d.isoformat()}"),
                 st("Convert with the IANA zone database rather than mental arithmetic.", "python",
                    f"datetime({d.year}, {d.month}, {d.day}, {hh}, {mm}, tzinfo=ZoneInfo('{TZ[a][3]}'))"
                    f".astimezone(ZoneInfo('{TZ[b][3]}'))", f"{new_d.isoformat()} {hm(tgt)} {_utc(ob)}")]
        dst_rules = {"N-US": "DST 10 March - 3 November 2024", "N-EU": "summer time 31 March - 27 October 2024",
                     "Sydney": "DST ends 7 April 2024, starts 6 October 2024",
                     "Auckland": "DST ends 7 April 2024, starts 29 September 2024"}
        dst_cities = [c for c in (a, b) if TZ[c][2]]
        if dst_cities:
            c0 = dst_cities[0]
            rule = dst_rules.get(c0) or dst_rules["N-US" if TZ[c0][3].startswith("America") else "N-EU"]
            steps.insert(1, st(f"Make sure the date is not near a daylight-saving switch in {c0}.", "web_search",
                               f"{c0} daylight saving time 2024 dates", f"{c0}: {rule}"))
        ans = f"{hm(tgt)} on {longdate(new_d)} in {b}" + (" (next day)" if day_shift > 0 else
                                                           " (previous day)" if day_shift < 0 else "")
        dst_note = [c for c in (a, b) if TZ[c][2]]
        reas = ("Looked up the offsets in force on that specific date"
                + (f" ({' and '.join(dst_note)} observe daylight saving time, and the southern hemisphere's summer "
                   "is the northern winter)" if dst_note else "")
                + ", then converted with ZoneInfo, which also handles half- and quarter-hour offsets. The answer "
                "states the date too, because large offsets move the meeting to another day.")
        good.append(tr(q, "convert a time between time zones", steps, reas, ans))
    bad.append(tr("A meeting is at 09:00 in New York on 2024-07-10. What time is that in London?",
                  "convert a time between time zones",
                  [st("Offsets.", "web_search", "New York London time difference", "New York is UTC-5; London is "
                      "UTC+0"),
                   st("Add 5 hours.", "calculator", "9 + 5", "14")],
                  "Added the standard-time difference.", "14:00 in London"))
    queries.append(qy("I'm in Chicago and my colleague is in Singapore. If I set a meeting for 8:30am my time on "
                      "15 July 2024, what time is it for her?", "time zone difference for a meeting"))
    queries.append(qy("5pm berlin time on jan 20 2024 = what time in auckland?", "convert local time"))
    queries.append(qy("北京时间2024年8月3日晚上9点，对应的纽约时间是几点？", "时区换算", lang="zh"))
    queries.append(qy("When should I join?", "time zone question", images=1, caption_only=True,
                      caption="Screenshot of an invitation: 'Launch livestream - 19:00 IST, 12 December 2024'; the "
                              "viewer is in Kathmandu and asks what local time that is."))
    queries.append(qy("Convert 07:15 Singapore time on 2 February 2024 into Denver local time.",
                      "convert a clock time across zones"))
    return good, bad, queries
