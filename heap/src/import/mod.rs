//! Placeholder: the importers issue (#6) fills this module.
