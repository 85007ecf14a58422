"""dpointnet's LGN input (input_type "lgn") against BMTK FilterNet itself (the vendored subset of bmtk @7e040d05),
and against closed forms of docs/V1-PAPER §2.4-2.5. Entry point: regression/compare_lgn_filternet.py."""
