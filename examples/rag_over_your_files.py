"""Questions over a folder of your own .txt, .md and .pdf files: chunk, embed, retrieve, answer with [chunk-id]
citations (.pdf text through pypdf: `pip install pypdf`; without it the .pdf files are skipped, said once).

    python examples/rag_over_your_files.py                                   # examples/notes/
    python examples/rag_over_your_files.py ~/notes/ "How often are backups taken?"

The folder becomes documents.jsonl (one document a file, its path as the id), which ``ingest_documents``
chunks into a bank under ./out/ (re-running embeds only what changed). Without TRACERAG_LM the answer is
extractive: the leading sentence of the best chunks, each cited. With it the chunks are graded, the answer
is written from the kept ones and checked for groundedness.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tracerag
from tracerag import HybridRetriever, RAGConfig, SelfReflectiveRAG
from tracerag.stores.cosine_bank import CosineBank

HERE = Path(__file__).resolve().parent
QUESTIONS = ["How often are the database backups taken?", "Who do I call when the pager fires at night?"]


def folder_to_jsonl(folder: Path, out: Path) -> int:
    """One JSON line per .txt/.md/.pdf file: {"id": its path in the folder, "title": its first heading (a .pdf:
    its title, else its name), "text"}."""
    files = sorted(p for p in folder.rglob("*") if p.suffix.lower() in (".txt", ".md", ".pdf") and p.is_file())
    pdfs = [p for p in files if p.suffix.lower() == ".pdf"]
    try:
        import pypdf
    except ImportError:
        if pdfs:
            print(f"skipped {len(pdfs)} .pdf file(s): pip install pypdf to read them")
        files = [p for p in files if p not in pdfs]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as out_lines:
        for path in files:
            if path.suffix.lower() == ".pdf":
                reader = pypdf.PdfReader(path)
                heading = (reader.metadata or {}).get("/Title") or path.stem
                text = "\n".join(page.extract_text() or "" for page in reader.pages)
            else:
                lines_of = path.read_text(encoding="utf-8").splitlines()
                heading = next((line.lstrip("# ").strip() for line in lines_of if line.startswith("#")), path.stem)
                text = "\n".join(line for line in lines_of if not line.startswith("#"))   # headings: the title
            doc = {"id": path.relative_to(folder).as_posix(), "title": heading, "text": text}
            out_lines.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return len(files)


def main(argv: list[str] | None = None, out_dir: str | Path = "out") -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else HERE / "notes"
    questions = args[1:] or QUESTIONS
    out_dir = Path(out_dir)
    if not folder.is_dir():
        raise tracerag.errors.FileMissing(f"{folder}: no such folder (give a folder of .md, .txt or .pdf files)")
    tracerag.configure()                                   # the LM named by TRACERAG_LM, if any
    embedder = tracerag.get_embedder()
    print(f"{folder_to_jsonl(folder, out_dir / 'documents.jsonl')} files from {folder}")
    report = tracerag.ingest_documents(out_dir / "documents.jsonl", out_dir / "chunks", embedder)
    print(f"{report.chunks} chunks in {out_dir / 'chunks'}")
    program = SelfReflectiveRAG(HybridRetriever(CosineBank.load(out_dir / "chunks", embedder)), RAGConfig(k=5))
    for question in questions:
        pred = program(question=question)
        print(f"\nQ: {question}\nA: {pred.answer}\n   cited: {', '.join(pred.cited_ids)}  hint: {pred.hint}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except tracerag.TraceragError as exc:  # a wrong path, a file that cannot be read: one line, not a traceback
        sys.exit(f"error: {exc}")
