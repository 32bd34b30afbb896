"""Families that write or fix code: code-bug-fix, regex-writing and sql-query (both checked at generation
time) and spreadsheet-formula."""

from __future__ import annotations

import re
from datetime import date, timedelta

from .common import PEOPLE, pick, qy, st, tr

# ----------------------------------------------------------------------------------------------------------------
# code bug fixing
# ----------------------------------------------------------------------------------------------------------------
BUGS = [
    ("Python", "should return the last n items of a list but returns one too many",
     "def last_n(xs, n):\n    return xs[len(xs) - n - 1:]", "last_n([1, 2, 3, 4], 2) -> [2, 3, 4]",
     "def last_n(xs, n):\n    return xs[len(xs) - n:] if n > 0 else []",
     "off-by-one in the slice start; also guard n == 0 (xs[-0:] would return the whole list)"),
    ("Python", "keeps remembering tags from previous calls",
     "def add_tag(tag, tags=[]):\n    tags.append(tag)\n    return tags",
     "add_tag('a') -> ['a']; add_tag('b') -> ['a', 'b']",
     "def add_tag(tag, tags=None):\n    tags = [] if tags is None else tags\n    tags.append(tag)\n    return tags",
     "mutable default argument is created once at definition time"),
    ("Python", "builds a list of callbacks but every callback returns 2",
     "callbacks = [lambda: i for i in range(3)]", "[f() for f in callbacks] -> [2, 2, 2]",
     "callbacks = [lambda i=i: i for i in range(3)]", "closures bind the variable late; bind the value as a default"),
    ("Python", "should remove even numbers but leaves some behind",
     "def drop_even(nums):\n    for x in nums:\n        if x % 2 == 0:\n            nums.remove(x)\n    return nums",
     "drop_even([2, 4, 5, 6]) -> [4, 5]", "def drop_even(nums):\n    return [x for x in nums if x % 2 != 0]",
     "removing from a list while iterating over it skips elements"),
    ("Python", "prints None instead of the sorted names",
     "names = ['bo', 'al', 'cy']\nsorted_names = names.sort()\nprint(sorted_names)", "None",
     "names = ['bo', 'al', 'cy']\nsorted_names = sorted(names)\nprint(sorted_names)",
     "list.sort() sorts in place and returns None"),
    ("Python", "a float comparison in a unit test fails although the numbers look equal",
     "assert total(0.1, 0.2) == 0.3", "AssertionError: 0.30000000000000004 != 0.3",
     "import math\nassert math.isclose(total(0.1, 0.2), 0.3, rel_tol=1e-9)",
     "binary floating point cannot represent 0.1 exactly; compare with a tolerance"),
    ("Python", "a recursive factorial returns None and then crashes",
     "def fact(n):\n    if n <= 1:\n        return 1\n    n * fact(n - 1)",
     "TypeError: unsupported operand type(s) for *: 'int' and 'NoneType'",
     "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)",
     "the recursive branch forgot to return"),
    ("JavaScript", "turns ['1', '2', '3'] into numbers but gets NaN",
     "const nums = ['1', '2', '3'].map(parseInt);", "[1, NaN, NaN]",
     "const nums = ['1', '2', '3'].map(s => parseInt(s, 10));",
     "map passes (value, index) and parseInt treats the index as the radix"),
    ("JavaScript", "fails with 'json is not a function' when loading data",
     "async function load(url) {\n  const data = fetch(url).json();\n  return data;\n}",
     "TypeError: fetch(...).json is not a function",
     "async function load(url) {\n  const res = await fetch(url);\n  return await res.json();\n}",
     "fetch returns a Promise; await the response before calling .json()"),
    ("Python", "crashes with KeyError when counting words",
     "counts = {}\nfor w in words:\n    counts[w] += 1", "KeyError: 'the'",
     "from collections import Counter\ncounts = Counter(words)", "the key does not exist before the first += 1"),
    ("Python", "computes an average that is always a whole number",
     "def mean(xs):\n    return sum(xs) // len(xs)", "mean([1, 2]) -> 1",
     "def mean(xs):\n    return sum(xs) / len(xs) if xs else float('nan')", "// is floor division"),
]


def fam_code(rng):
    good, bad, queries = [], [], []
    for i, (lang, symptom, code, obs, fixed, cause) in enumerate(BUGS):
        with_img = i % 4 == 2
        body = "the code in the screenshot" if with_img else f"this {lang} code:\n```\n{code}\n```"
        q = pick(rng, [f"Why does {body} misbehave? It {symptom}. Please fix it.",
                       f"Bug: my function {symptom}. Here's {body}. What's wrong?",
                       f"Fix {body} - it {symptom}."])
        runner = "code_interpreter"
        steps = []
        if with_img:
            steps.append(st("Transcribe the screenshot exactly, keeping indentation.", "ocr", "image_1 (code "
                            "screenshot)", code.replace("\n", "\\n")))
        steps += [st("Reproduce the bug with a minimal call before changing anything.", runner,
                     f"{code}\n# minimal reproduction", obs),
                  st(f"Root cause: {cause}. Apply the smallest fix and rerun the same reproduction plus an edge "
                     "case.", runner, f"{fixed}\n# rerun reproduction + edge case", "output now as expected; edge "
                     "case passes"),
                  st("Run the existing test suite to make sure nothing relied on the old behaviour.", runner,
                     "python -m pytest -q" if lang == "Python" else "npx jest", f"{12 + len(code) % 23} passed")]
        reas = (f"Reproduced the symptom first, which pointed straight at the cause: {cause}. The fix is minimal and "
                "targets the cause instead of masking it (no try/except around the symptom), and it was verified by "
                "rerunning the same reproduction plus an edge case.")
        good.append(tr(q, f"fix a bug in {lang} code", steps, reas, f"Cause: {cause}. Fixed code:\n{fixed}",
                       images=1 if with_img else 0,
                       caption=f"Screenshot of an editor with this {lang} snippet: {code}" if with_img else None))
    bad.append(tr("My factorial function returns None for n=5. Fix it:\n```\ndef fact(n):\n    if n <= 1:\n"
                  "        return 1\n    n * fact(n - 1)\n```", "fix a bug in Python code",
                  [st("Run it.", "code_interpreter", "fact(5)", "TypeError: unsupported operand type(s)"),
                   st("Catch the error.", "code_interpreter", "try: ... except TypeError: return 1", "fact(5) -> 1")],
                  "Wrapped the failing call so it no longer crashes.", "Wrap the body in try/except and return 1 "
                  "on TypeError."))
    queries.append(qy("Why does this print 3, 3, 3 instead of 0, 1, 2?\n```js\nfor (var i = 0; i < 3; i++) {\n  "
                      "setTimeout(() => console.log(i), 0);\n}\n```", "debug a JavaScript loop"))
    queries.append(qy("my log function always stamps the same time?? `def log(msg, ts=datetime.now()): ...` wtf",
                      "python default argument bug"))
    queries.append(qy("这段Python代码报错 TypeError: 'str' object does not support item assignment，怎么改？\n"
                      "s = 'hello'\ns[0] = 'H'", "修复Python代码错误", lang="zh"))
    queries.append(qy("What's wrong here?", "debug code from a screenshot", images=1, caption_only=True,
                      caption="Screenshot of a Python REPL: 'list = [3, 1, 2]' on one line, later "
                              "'list(range(3))' raising TypeError: 'list' object is not callable."))
    queries.append(qy("The sum function below never adds the final element of the array, can you spot the bug?\n"
                      "def total(xs):\n    s = 0\n    for i in range(len(xs) - 1):\n        s += xs[i]\n    return s",
                      "find an off-by-one error"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# regex writing (every regex is checked against its examples at generation time)
# ----------------------------------------------------------------------------------------------------------------
REGEXES = [
    # task, final pattern, must match, must not match, flags, re function, first (too loose) draft
    ("match ISO dates like 2024-03-15 with a valid month and day range",
     r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$", ["2024-03-15", "1999-12-31"],
     ["2024-13-01", "2024-3-5", "2024-00-10"], 0, "fullmatch", r"^\d{4}-\d{2}-\d{2}$"),
    ("extract the domain part of email addresses", r"@([A-Za-z0-9.-]+\.[A-Za-z]{2,})",
     ["ana@mail.example.com", "bo@uni.edu"], ["not-an-email", "x@localhost"], 0, "search", r"@(.+)"),
    ("validate US phone numbers written as (555) 123-4567", r"^\(\d{3}\) \d{3}-\d{4}$",
     ["(555) 123-4567", "(212) 000-9999"], ["555-123-4567", "(555)123-4567"], 0, "fullmatch",
     r"^\(?\d{3}\)?[ -]?\d{3}-\d{4}$"),
    ("match CSS hex colours such as #fff or #1a2b3c", r"^#(?:[0-9a-fA-F]{3}){1,2}$",
     ["#fff", "#1A2b3C"], ["#ffff", "1a2b3c", "#12345g"], 0, "fullmatch", r"^#[0-9a-fA-F]+$"),
    ("validate IPv4 addresses with every octet between 0 and 255",
     r"^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$",
     ["192.168.0.1", "255.255.255.0"], ["256.1.1.1", "1.2.3", "01.2.3.4"], 0, "fullmatch", r"^(\d{1,3}\.){3}\d{1,3}$"),
    ("find hashtags in a tweet but not the '#' inside URLs like page#section", r"(?<![\w/])#(\w+)",
     ["loving #python today", "#ai rocks"], ["see site.com/page#section", "no tags here"], 0, "search", r"#(\w+)"),
    ("extract dollar prices like $1,234.56 or $40 from text", r"\$\d{1,3}(?:,\d{3})*(?:\.\d{2})?(?!\d)",
     ["total $1,234.56 due", "only $40"], ["price 40 USD", "EUR 5.00"], 0, "search", r"\d+\.\d{2}"),
    ("validate 24-hour times HH:MM", r"^([01]\d|2[0-3]):[0-5]\d$", ["00:00", "23:59", "09:30"],
     ["24:00", "9:30", "12:60"], 0, "fullmatch", r"^\d{2}:\d{2}$"),
    ("validate semantic version strings like 1.12.0 (no leading zeros)",
     r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$", ["1.12.0", "0.0.1"], ["1.2", "01.2.3", "1.2.3-beta"], 0,
     "fullmatch", r"^\d+\.\d+\.\d+$"),
    ("find accidentally repeated words such as 'the the'", r"\b(\w+)\s+\1\b", ["I saw the the cat", "It is is ok"],
     ["the theme park", "no repeats"], re.IGNORECASE, "search", r"(\w+) \1"),
    ("find lines that end with trailing spaces or tabs", r"[ \t]+$", ["code  \nnext", "end\t"],
     ["clean\nlines", "blank\n\nline"], re.MULTILINE, "search", r"\s+$"),
]


def fam_regex(rng):
    good, bad, queries = [], [], []
    for desc, pat, pos, neg, flags, mode, draft in REGEXES:
        def ok(p, s, mode=mode, flags=flags):
            rx = re.compile(p, flags)
            return bool(rx.fullmatch(s) if mode == "fullmatch" else rx.search(s))
        assert all(ok(pat, s) for s in pos) and not any(ok(pat, s) for s in neg), desc
        fails = [s for s in pos if not ok(draft, s)] + [s for s in neg if ok(draft, s)]
        assert fails, desc
        q = pick(rng, [f"Write a regular expression to {desc}.", f"I need a regex that will {desc}. Can you help?",
                       f"What regex pattern would {desc}? It's for Python's re module."])
        flag_txt = {0: "", re.IGNORECASE: " with re.IGNORECASE", re.MULTILINE: " with re.MULTILINE"}[flags]
        steps = [st("Write test cases first: strings that must match and strings that must not.", "python",
                    f"pos = {pos}\nneg = {neg}", f"{len(pos)} positive, {len(neg)} negative cases"),
                 st("Try the obvious pattern first.", "python", f"check(r'{draft}')",
                    f"FAIL on {', '.join(repr(x) for x in fails)}"),
                 st("Tighten it (anchors, explicit numeric ranges, lookarounds) and rerun every case.", "python",
                    f"check(r'{pat}'{', ' + flag_txt.split()[-1] if flags else ''})",
                    "PASS: all positives match, all negatives rejected")]
        reas = ("Built a small test set of must-match and must-not-match strings before writing the pattern. The "
                f"obvious draft r'{draft}' was too loose (it got {fails[0]!r} wrong), which showed where anchors, "
                f"explicit ranges or lookarounds were needed. The final pattern passed every case{flag_txt}; re.{mode} "
                "is stated because search and fullmatch behave differently.")
        good.append(tr(q, "write a regular expression", steps, reas, f"r'{pat}'{flag_txt} (use re.{mode})"))
    bad.append(tr("Write a regex that accepts only valid dates in YYYY-MM-DD format (real months 01-12).",
                  "write a regular expression",
                  [st("Pattern.", "python", r"re.fullmatch(r'\d{4}-\d{2}-\d{2}', '2024-03-15')", "match"),
                   st("Another check.", "python", r"re.fullmatch(r'\d{4}-\d{2}-\d{2}', '1999-12-31')", "match")],
                  "Tested on valid dates only.", r"r'\d{4}-\d{2}-\d{2}'"))
    queries.append(qy("Give me a Python regex for simplified UK postcodes like SW1A 1AA or M1 1AE.",
                      "regex for postcodes"))
    queries.append(qy("regex to pull every http/https url out of a chunk of text?", "extract URLs with a regex"))
    queries.append(qy("写一个正则表达式，匹配中国大陆的11位手机号码（以1开头，第二位是3到9）。", "编写正则表达式",
                      lang="zh"))
    queries.append(qy("Regex help please", "write a pattern", images=1, caption_only=True,
                      caption="Screenshot of a ticket: 'Password must be 8+ chars with at least one digit and one "
                              "uppercase letter - need a single regex for the form validator.'"))
    queries.append(qy("How do I match text inside double quotes, e.g. get name and value from say \"name\" = "
                      "\"value\"?", "capture quoted strings with regex"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# SQL query writing (every query is executed on a small sqlite database at generation time)
# ----------------------------------------------------------------------------------------------------------------
SCHEMA = """
CREATE TABLE employees (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, salary INTEGER, manager_id INTEGER,
                        hired DATE);
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, country TEXT, signup_date DATE, email TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, order_date DATE, amount REAL, due_date DATE,
                     shipped_date DATE);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL);
CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, qty INTEGER);
"""

SQL_TASKS = [
    ("List the top 3 customers by total order amount in 2023.", "customers, orders",
     "SELECT c.name, ROUND(SUM(o.amount), 2) AS total\nFROM customers c JOIN orders o ON o.customer_id = c.id\n"
     "WHERE o.order_date >= '2023-01-01' AND o.order_date < '2024-01-01'\nGROUP BY c.id, c.name\n"
     "ORDER BY total DESC\nLIMIT 3;", "filter the year with a half-open date range so 31 December is included"),
    ("Which departments have an average salary above 60,000?", "employees",
     "SELECT dept, ROUND(AVG(salary)) AS avg_salary\nFROM employees\nGROUP BY dept\nHAVING AVG(salary) > 60000\n"
     "ORDER BY avg_salary DESC;", "conditions on aggregates belong in HAVING, not WHERE"),
    ("Find products that have never been ordered.", "products, order_items",
     "SELECT p.name\nFROM products p LEFT JOIN order_items oi ON oi.product_id = p.id\nWHERE oi.product_id IS NULL\n"
     "ORDER BY p.name;", "anti-join with LEFT JOIN ... IS NULL (NOT IN breaks if the subquery returns NULL)"),
    ("What is the second-highest distinct salary?", "employees",
     "SELECT MAX(salary) AS second_highest\nFROM employees\nWHERE salary < (SELECT MAX(salary) FROM employees);",
     "ties at the top must not be returned as 'second'"),
    ("Show monthly revenue for 2023 with a running total.", "orders",
     "SELECT strftime('%Y-%m', order_date) AS month, ROUND(SUM(amount), 2) AS revenue,\n"
     "       ROUND(SUM(SUM(amount)) OVER (ORDER BY strftime('%Y-%m', order_date)), 2) AS running_total\n"
     "FROM orders\nWHERE order_date >= '2023-01-01' AND order_date < '2024-01-01'\nGROUP BY month\nORDER BY month;",
     "a window over the grouped sum gives the running total"),
    ("Which employees earn more than their manager?", "employees",
     "SELECT e.name, e.salary, m.name AS manager, m.salary AS manager_salary\n"
     "FROM employees e JOIN employees m ON e.manager_id = m.id\nWHERE e.salary > m.salary\nORDER BY e.name;",
     "self-join the table to itself on manager_id"),
    ("Find email addresses used by more than one customer.", "customers",
     "SELECT LOWER(email) AS email, COUNT(*) AS n\nFROM customers\nGROUP BY LOWER(email)\nHAVING COUNT(*) > 1\n"
     "ORDER BY n DESC, email;", "normalise case before grouping duplicates"),
    ("What percentage of orders shipped after their due date?", "orders",
     "SELECT ROUND(100.0 * SUM(CASE WHEN shipped_date > due_date THEN 1 ELSE 0 END) / COUNT(*), 1) AS pct_late\n"
     "FROM orders\nWHERE shipped_date IS NOT NULL;", "multiply by 100.0 to avoid integer division; exclude unshipped"),
    ("Get each customer's most recent order (date and amount).", "customers, orders",
     "SELECT name, order_date, amount FROM (\n  SELECT c.name, o.order_date, o.amount,\n"
     "         ROW_NUMBER() OVER (PARTITION BY c.id ORDER BY o.order_date DESC, o.id DESC) AS rn\n"
     "  FROM customers c JOIN orders o ON o.customer_id = c.id\n) WHERE rn = 1\nORDER BY name;",
     "ROW_NUMBER per customer avoids the GROUP BY + non-aggregated column trap"),
    ("Which customers signed up in 2023 but have never placed an order?", "customers, orders",
     "SELECT c.name, c.signup_date\nFROM customers c\nWHERE c.signup_date >= '2023-01-01' AND c.signup_date < "
     "'2024-01-01'\n  AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)\nORDER BY c.signup_date;",
     "NOT EXISTS is NULL-safe"),
    ("Total revenue per product category, highest first.", "products, order_items",
     "SELECT p.category, ROUND(SUM(oi.qty * p.price), 2) AS revenue\nFROM order_items oi JOIN products p ON p.id = "
     "oi.product_id\nGROUP BY p.category\nORDER BY revenue DESC;", "revenue is qty x price per line, summed"),
]


def _sql_db(rng):
    import sqlite3
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    depts = ["Engineering", "Sales", "Finance", "Support"]
    emps = []
    for i, n in enumerate(PEOPLE[:16], start=1):
        mgr = None if i <= 4 else (i - 1) % 4 + 1
        sal = 90000 if i <= 2 else rng.randrange(42000, 98000, 1000)
        emps.append((i, n, depts[(i - 1) % 4], sal, mgr, f"20{rng.randint(15, 23)}-{rng.randint(1, 12):02d}-01"))
    db.executemany("INSERT INTO employees VALUES (?,?,?,?,?,?)", emps)
    countries = ["DE", "FR", "US", "JP", "BR"]
    custs = []
    for i, n in enumerate(PEOPLE[5:20], start=1):
        user = n.split()[0].lower()
        email = f"{user}@example.com" if i % 6 else f"{PEOPLE[5 + i % 5].split()[0]}@Example.com"
        signup = f"202{rng.randint(1, 3)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        custs.append((i, n, countries[i % 5], signup, email))
    db.executemany("INSERT INTO customers VALUES (?,?,?,?,?)", custs)
    orders = []
    for i in range(1, 61):
        d = date(2022, 6, 1) + timedelta(days=rng.randint(0, 640))
        due = d + timedelta(days=5)
        shipped = None if rng.random() < 0.08 else d + timedelta(days=rng.randint(1, 8))
        orders.append((i, rng.randint(1, 12), d.isoformat(), round(rng.uniform(15, 480), 2), due.isoformat(),
                       shipped.isoformat() if shipped else None))
    db.executemany("INSERT INTO orders VALUES (?,?,?,?,?,?)", orders)
    prods = [(i, n, c, p) for i, (n, c, p) in enumerate(
        [("Desk lamp", "Home", 24.9), ("USB-C hub", "Electronics", 39.0), ("Chair", "Furniture", 189.0),
         ("Monitor arm", "Furniture", 64.5), ("Notebook", "Stationery", 3.2), ("Webcam", "Electronics", 59.0),
         ("Stapler", "Stationery", 8.75), ("Rug", "Home", 99.0)], start=1)]
    db.executemany("INSERT INTO products VALUES (?,?,?,?)", prods)
    items = [(o, rng.randint(1, 6), rng.randint(1, 4)) for o in range(1, 61)]
    db.executemany("INSERT INTO order_items VALUES (?,?,?)", items)
    return db


def fam_sql(rng):
    good, bad, queries = [], [], []
    db = _sql_db(rng)
    for i, (ask, tables, sql, key) in enumerate(SQL_TASKS):
        rows = db.execute(sql).fetchall()
        cols = [d[0] for d in db.execute(sql).description]
        shown = "; ".join(str(tuple(r)) for r in rows[:4]) + (f"; ... ({len(rows)} rows)" if len(rows) > 4 else "")
        cols_txt = {"employees": "employees(id, name, dept, salary, manager_id, hired)",
                    "customers": "customers(id, name, country, signup_date, email)",
                    "orders": "orders(id, customer_id, order_date, amount, due_date, shipped_date)",
                    "products": "products(id, name, category, price)",
                    "order_items": "order_items(order_id, product_id, qty)"}
        schema = "; ".join(cols_txt[t.strip()] for t in tables.split(","))
        with_img = i % 4 == 1
        q = pick(rng, [f"Write a SQL query: {ask[0].lower()}{ask[1:]} Tables: {schema}.",
                       f"{ask} I'm on SQLite; the schema is {schema}.",
                       f"Help me with SQL - {ask[0].lower()}{ask[1:]} ({schema})"])
        if with_img:
            q = f"{ask} The table definitions are in the screenshot."
        steps = []
        if with_img:
            steps.append(st("Read the schema from the screenshot.", "ocr", "image_1 (schema diagram)", schema))
        steps += [st("Build a small sqlite database with sample rows, including edge cases (ties, NULLs, duplicates "
                     "differing only in case).", "code_interpreter", f"create tables {tables}; insert sample rows",
                     "tables created; sample rows inserted"),
                  st(f"Write the query; key point: {key}.", "code_interpreter", sql, f"columns {cols}: {shown}"),
                  st("Check the result against a hand count on the sample data.", "code_interpreter",
                     "compare with a plain Python computation over the same rows", "matches")]
        reas = (f"Wrote the query against a throwaway sqlite database seeded with edge cases, so mistakes show up as "
                f"wrong rows rather than as review comments. The key point was that {key}. The result was checked "
                "against an independent Python computation on the same sample rows.")
        good.append(tr(q, "write a SQL query", steps, reas, f"```sql\n{sql}\n```", images=1 if with_img else 0,
                       caption=f"Screenshot of a database schema diagram: {schema}." if with_img else None))
    wrong_sql = "SELECT salary FROM employees ORDER BY salary DESC LIMIT 1 OFFSET 1;"
    got = db.execute(wrong_sql).fetchall()
    bad.append(tr("Write a SQL query for the second highest salary in employees(id, name, dept, salary).",
                  "write a SQL query",
                  [st("Sort and skip one.", "code_interpreter", wrong_sql, str(got)),
                   st("Looks fine.", "code_interpreter", "SELECT COUNT(*) FROM employees", "16")],
                  "Sorted by salary descending and took the second row.", f"```sql\n{wrong_sql}\n```"))
    db.close()
    queries.append(qy("SQL: average order value per country, only countries with at least 5 orders. Tables "
                      "customers(id, country) and orders(customer_id, amount).", "aggregate query with HAVING"))
    queries.append(qy("how do i get customers with more than 3 orders in postgres? orders(customer_id, ...)",
                      "count per group query"))
    queries.append(qy("写一条SQL：查询每个部门工资最高的员工（表 employees(id, name, dept, salary)），"
                      "并列第一都要返回。",
                      "编写SQL查询", lang="zh"))
    queries.append(qy("Need the query for this.", "SQL from a screenshot", images=1, caption_only=True,
                      caption="Screenshot of a Jira ticket: 'Report: orders whose amount is above the overall "
                              "average order amount, newest first. Table orders(id, order_date, amount).'"))
    queries.append(qy("Could you write SQL that returns, for each month of 2024, how many new users signed up? "
                      "Table users(id, created_at).", "monthly counts in SQL"))
    return good, bad, queries


# ----------------------------------------------------------------------------------------------------------------
# spreadsheet formulas
# ----------------------------------------------------------------------------------------------------------------
SHEET_TASKS = [
    ("look up each product's price from the 'Products' sheet (codes in column A there, prices in column C)",
     "Orders!A2 holds a product code", '=XLOOKUP(A2, Products!A:A, Products!C:C, "not found")',
     "XLOOKUP with an explicit not-found value; exact match is the default", "A2=P-104 -> 12.90; A3=P-999 -> not "
     "found"),
    ("total the March 2024 sales for the North region",
     "B = region, C = date, D = amount",
     '=SUMIFS(D:D, B:B, "North", C:C, ">="&DATE(2024,3,1), C:C, "<"&DATE(2024,4,1))',
     "dates must be real dates, compared with a half-open range", "North/March: 18,420.50"),
    ("count the scores that are at least 50 but below 100", "scores in E2:E200",
     '=COUNTIFS(E2:E200, ">=50", E2:E200, "<100")', "two criteria on the same range in COUNTIFS", "137"),
    ("return the value at the intersection of a chosen row label (H2) and column label (I2)",
     "row labels in A2:A10, column labels in B1:F1, values in B2:F10",
     "=INDEX(B2:F10, MATCH(H2, A2:A10, 0), MATCH(I2, B1:F1, 0))", "two MATCHes with match type 0 (exact)",
     "H2=Berlin, I2=Q3 -> 412"),
    ("fetch the exchange rate for a currency code and show 0 instead of #N/A when the code is missing",
     "codes in A, Rates sheet has code/rate in A:B", "=IFERROR(VLOOKUP(A2, Rates!A:B, 2, FALSE), 0)",
     "FALSE forces exact match; IFERROR only wraps the lookup", "A2=CHF -> 0.96; A3=XYZ -> 0"),
    ("extract the first name from a full name like 'Ana Souza'", "full names in A2",
     '=LEFT(A2, FIND(" ", A2 & " ") - 1)', "append a space so single-word names don't error",
     "'Ana Souza' -> Ana; 'Madonna' -> Madonna"),
    ("count working days between a start date and an end date, excluding public holidays",
     "B = start, C = end, holidays listed in Holidays!A2:A20", "=NETWORKDAYS(B2, C2, Holidays!$A$2:$A$20)",
     "absolute reference to the holiday list so it survives fill-down", "2024-04-01..2024-04-30 -> 21"),
    ("show the percentage change from last year (B) to this year (C)", "B = 2023 value, C = 2024 value",
     '=IF(B2=0, "", (C2-B2)/B2)', "divide by the old value; guard against division by zero; format as %",
     "B2=80, C2=92 -> 15.0%"),
    ("rank each salesperson by revenue, highest = 1", "revenues in D2:D50", "=RANK.EQ(D2, $D$2:$D$50, 0)",
     "lock the range with $ before filling down", "D2=58,200 -> 4"),
    ("count how many different customers appear in a column with repeats", "customer names in A2:A200",
     "=COUNTA(UNIQUE(FILTER(A2:A200, A2:A200<>\"\")))", "filter blanks first, otherwise the blank counts as a value",
     "-> 37"),
    ("display the weekday name for a date", "dates in A2", '=TEXT(A2, "dddd")',
     "the date must be a real date value, not text", "2024-07-04 -> Thursday"),
]


def fam_sheet(rng):
    good, bad, queries = [], [], []
    for i, (ask, layout, formula, key, check) in enumerate(SHEET_TASKS):
        app = pick(rng, ["Excel", "Google Sheets", "Excel 365"])
        with_img = i % 3 == 0
        q = pick(rng, [f"What {app} formula would {ask}? Layout: {layout}.",
                       f"In {app}, I want to {ask}. My sheet: {layout}. Which formula?",
                       f"Spreadsheet question ({app}): how do I {ask}? ({layout})"])
        if with_img:
            q = f"Looking at my sheet in the screenshot, which {app} formula will {ask}?"
        steps = []
        if with_img:
            steps.append(st("Work out the layout (which columns hold what, header row, sheet names).", "ocr",
                            "image_1 (spreadsheet screenshot)", f"Layout: {layout}; header in row 1"))
        steps += [st(f"Draft the formula; key point: {key}.", "python",
                     f"# emulate {formula} on a copy of the data with pandas", check),
                  st("Test edge cases (missing value, blank cell, fill-down) in the emulation.", "python",
                     "edge cases: blank row, missing key, copied to row 50", "behaves as intended")]
        newfn = [f for f in ("XLOOKUP", "UNIQUE", "FILTER") if f in formula]
        if newfn:
            steps.append(st(f"{'/'.join(newfn)} is not available in every version; check it exists in {app}.",
                            "web_search", f"{newfn[0]} function availability Excel Google Sheets",
                            f"{newfn[0]}: available in Excel 365 / Excel 2021 and Google Sheets; not in Excel 2019 "
                            "or earlier"))
        reas = (f"Identified the exact layout first, then chose the function that matches the intent. Key detail: "
                f"{key}. The formula's logic was emulated on sample data, including blanks and a "
                "missing key, before giving it.")
        good.append(tr(q, f"write a spreadsheet formula ({app})", steps, reas, formula, images=1 if with_img else 0,
                       caption=f"Spreadsheet screenshot; {layout}." if with_img else None))
    bad.append(tr("In Excel, look up the price for the code in A2 from Products!A:C (price in column C).",
                  "write a spreadsheet formula (Excel)",
                  [st("Use VLOOKUP.", "python", "emulate =VLOOKUP(A2, Products!A:C, 3)", "A2=P-104 -> 12.90"),
                   st("Done.", "python", "emulate on A3=P-105", "P-105 -> 12.90")],
                  "VLOOKUP with column index 3.", "=VLOOKUP(A2, Products!A:C, 3)"))
    queries.append(qy("Google Sheets: highlight rows where the due date in column D has passed and the status in E "
                      "isn't 'Done'. What custom formula do I use in conditional formatting?",
                      "conditional formatting formula"))
    queries.append(qy("excel - avg of column F but only for rows where B says 'Online' and C is 2024. formula?",
                      "conditional average formula"))
    queries.append(qy("Excel里怎么用公式统计A列中不重复的值有多少个？A列有空单元格。", "编写Excel公式", lang="zh"))
    queries.append(qy("What formula goes in the highlighted cell?", "spreadsheet formula from a screenshot",
                      images=1, caption_only=True,
                      caption="Screenshot of a sheet with first names in A and last names in B; the highlighted "
                              "cell C2 should show 'Last, First' for every row."))
    queries.append(qy("Is there a formula to grab the last non-empty value in column B of my Excel sheet?",
                      "lookup the last filled cell"))
    return good, bad, queries
