//! openapi
