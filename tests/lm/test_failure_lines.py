"""An LM failure is said in one line chosen by its type, never by words in its message."""

import httpx
import pytest
from dspy._vendor.lm15 import transports as wire
from dspy.utils import exceptions as dspy_errors

from tracerag.lm.failures import failure_line


def _raised_from(outer: Exception, inner: Exception) -> Exception:
    try:
        try:
            raise inner
        except Exception as cause:
            raise outer from cause
    except Exception as exc:
        return exc


@pytest.mark.parametrize(("exc", "says"), [
    (dspy_errors.LMTimeoutError("slow"), "no reply within"),
    (TimeoutError(), "no reply within"),
    (httpx.ReadTimeout("x"), "no reply within"),
    # DSPy files a read timeout as a transport error; the wire's timeout it came from says what it was
    (_raised_from(dspy_errors.LMTransportError("read failed"), wire.ReadTimeout("no bytes")), "no reply within"),
    (dspy_errors.LMCollectionLimitError("reply over the cap"), "not retried"),
    (dspy_errors.LMNotConfiguredError("OPENAI_API_KEY is not set"), "set TRACERAG_API_KEY or OPENAI_API_KEY"),
    (dspy_errors.LMServerError("503"), "--lm-retries"),
    (httpx.ConnectError("refused"), "--lm-retries"),
])
def test_each_kind_of_failure_names_what_to_change(exc, says):
    assert says in failure_line(exc)


def test_words_in_a_message_do_not_make_a_failure_what_they_say():
    line = failure_line(ValueError("the parse timed out: no api key, connection refused"))
    assert line == "ValueError: the parse timed out: no api key, connection refused"
