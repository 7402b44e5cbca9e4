"""Local fakes of the services prdigest talks to, served on 127.0.0.1 for tests and benches."""
