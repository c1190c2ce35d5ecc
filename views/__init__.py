"""The Streamlit pages. `st.navigation` in app.py runs each as a script by its path; this file only
gives them package names (views.live, ...) for mypy and the architecture test."""
