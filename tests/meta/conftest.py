from tests.meta._lib import mode  # noqa: F401 - the fixture
