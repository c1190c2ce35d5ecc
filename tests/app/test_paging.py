"""The pages' paging widget (components.widgets.page_of): the box only past one page, the rows of the page chosen."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _paged(count: int) -> None:
    import streamlit as st

    from components import widgets

    page = widgets.page_of(list(range(count)), 50, f"{count} rows", "paged")
    st.markdown(f"page {page.number}: {len(page.rows)} rows from {page.rows[0] if page.rows else None}")


def test_more_rows_than_a_page_get_a_box_and_its_page() -> None:
    at = AppTest.from_function(_paged, args=(120,)).run()
    assert not at.exception
    assert at.number_input(key="paged").label == "Page (of 3; 120 rows)"
    assert at.markdown[0].value == "page 1: 50 rows from 0"
    at.number_input(key="paged").set_value(3).run()
    assert at.markdown[0].value == "page 3: 20 rows from 100"


def test_one_page_of_rows_has_no_box() -> None:
    at = AppTest.from_function(_paged, args=(50,)).run()
    assert not at.exception
    assert not at.number_input
    assert at.markdown[0].value == "page 1: 50 rows from 0"
