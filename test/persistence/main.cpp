#define BOOST_TEST_MODULE persistence
#include <boost/test/unit_test.hpp>
