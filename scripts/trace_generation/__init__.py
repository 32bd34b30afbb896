"""The generator of the bundled `experience` dataset, run by scripts/generate_traces.py.

common holds the building blocks; charts, identification, documents, conversion, travel, markets, maths,
programming and lookup the task-family generators; assembly the families in generation order and build();
validation the checks; output the files and the README.
"""
