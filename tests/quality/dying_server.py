"""The quiz whose server dies at its eighth step, served by ``uvicorn dying_server:app``."""

from quality_corpus import DiesAfterSteps, app

app = app(DiesAfterSteps)
