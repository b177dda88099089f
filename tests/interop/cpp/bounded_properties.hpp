// The Ice properties every C++ interop client starts from: each wait bounded as in the Python
// clients, so a broken router fails a test instead of hanging it.
#pragma once

#include <Ice/Ice.h>

/// Invocations time out after 5 s, connects and closes after 3 s, connection warnings off; with
/// `retry` false also Ice.RetryIntervals=-1, so a failed call is seen, not silently retried.
inline Ice::PropertiesPtr boundedProperties(bool retry) {
    auto p = Ice::createProperties();
    p->setProperty("Ice.Warn.Connections", "0");
    p->setProperty("Ice.Default.InvocationTimeout", "5000");
    p->setProperty("Ice.Override.ConnectTimeout", "3000");
    p->setProperty("Ice.Override.CloseTimeout", "3000");
    if (!retry) p->setProperty("Ice.RetryIntervals", "-1");
    return p;
}
